"""The verification API and the annotator page, on the web kit (:mod:`docket.web`)."""
