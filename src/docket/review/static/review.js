// docket review: keyboard shortcuts and time-on-item for the item page. No build step.
// Keys: the decision buttons' data-key (r / i, or v / c), 0-3 grade, n next item.
(function () {
  "use strict";
  var loadedAt = Date.now();

  function typing(target) {
    var tag = target && target.tagName;
    return tag === "TEXTAREA" || tag === "SELECT" || (tag === "INPUT" && target.type !== "radio");
  }

  function setup() {
    var form = document.getElementById("decision-form");
    var sent = false;
    if (form) {
      form.addEventListener("submit", function (event) {
        if (sent) { event.preventDefault(); return; }  // no double submission
        sent = true;
        form.elements.seconds.value = ((Date.now() - loadedAt) / 1000).toFixed(2);
      });
    }
    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey) { return; }
      if (event.key === "Escape" && typing(event.target)) { event.target.blur(); return; }
      if (typing(event.target)) { return; }
      var key = event.key.toLowerCase();
      if (key === "n") {
        var next = document.getElementById("next-link");
        if (next) { event.preventDefault(); window.location.assign(next.href); }
        return;
      }
      if (!form) { return; }
      var radio = form.querySelector('input[name="grade"][data-key="' + CSS.escape(key) + '"]');
      if (radio) { event.preventDefault(); radio.checked = true; return; }
      var button = form.querySelector('button[data-key="' + CSS.escape(key) + '"]');
      if (button) { event.preventDefault(); form.requestSubmit(button); }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
