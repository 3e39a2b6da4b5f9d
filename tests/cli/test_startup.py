"""The command line starts lazily (issue 19): importing it pulls in no heavy library, and
the lazy ``docket --help`` lists exactly the commands that load."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

HEAVY = ("fastapi", "sqlalchemy", "llama_cpp", "numpy", "pandas", "starlette", "aiohttp")


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)  # fmt: skip
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_importing_the_cli_imports_no_heavy_library() -> None:
    loaded = _modules_after("import docket.cli.main")
    assert not [m for m in HEAVY if m in loaded]
    assert "docket.store" not in loaded and "docket.jobs" not in loaded


def test_help_and_version_import_no_command_module() -> None:
    for argv in (["--help"], ["--version"]):
        code = (
            f"import sys\nfrom docket.cli.main import main\nsys.argv = ['docket', *{argv!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass"
        )
        loaded = _modules_after(code)
        assert not [m for m in HEAVY if m in loaded], argv
        assert not [m for m in loaded if m.startswith("docket.cli.") and m != "docket.cli.main"]


def test_the_lazy_listing_matches_the_loaded_commands() -> None:
    from docket.cli.main import SUBCOMMANDS, load_command

    for name, _, short in SUBCOMMANDS:
        command = load_command(name)
        first = (command.help or "").strip().split("\n\n")[0].replace("\n", " ")
        assert first == short, name
        assert command.name == name


def test_subcommands_run_and_show_their_help() -> None:
    from docket.cli.main import SUBCOMMANDS, app

    runner = CliRunner()
    result = runner.invoke(app, ["review", "--help"])
    assert result.exit_code == 0 and "add-reviewer" in result.output
    result = runner.invoke(app, ["nosuch"])
    assert result.exit_code == 2
    listing = runner.invoke(app, ["--help"]).output
    assert all(name in listing for name, _, _ in SUBCOMMANDS)
