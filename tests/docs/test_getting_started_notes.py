"""Getting-started warns of what breaks beside tmcheck though tmcheck is not its cause (#42 item 6):
dadapy's numpy < 2 pin beside the pyarrow of Hugging Face `datasets`."""

from pathlib import Path

PAGE = Path(__file__).parents[2] / "docs" / "getting-started.md"


def test_getting_started_says_dadapy_breaks_import_datasets():
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert "dadapy 0.3.4 pins numpy < 2" in text and "`import datasets` fails" in text
    assert "keep dadapy in a venv of its own" in text
