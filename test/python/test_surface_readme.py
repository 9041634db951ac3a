"""The README's tour runs as written: every code block fenced as
```` ```sh tour ```` or ```` ```python tour ```` is executed, in order, in
one empty temporary folder (so the tour must create its own inputs), with
the tools of this environment on PATH. Links stay inside the repository."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"^```(sh|python) tour\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def test_the_tour_runs_as_written(tmp_path):
    blocks = BLOCK.findall(README)
    assert len(blocks) >= 5, "the README lost its runnable tour blocks"
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    for language, code in blocks:
        command = ["bash", "-e", "-c", code] if language == "sh" else [sys.executable, "-c", code]
        result = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, (
            f"README {language} block failed:\n{code}\n--- stdout\n{result.stdout}"
            f"\n--- stderr\n{result.stderr}"
        )


def test_links_and_paths_stay_in_the_repository():
    assert "../" not in README, "the README points outside the repository"
    for target in re.findall(r"\[[^\]\n\"]+\]\(([^)\s#]+)\)", README):
        if not target.startswith(("http://", "https://")):
            assert (ROOT / target).exists(), f"README links to missing {target}"
    for path in re.findall(r"`((?:docs|examples|test)/[\w./-]+\.(?:md|mlir|py))`", README):
        assert (ROOT / path).exists(), f"README names missing {path}"
