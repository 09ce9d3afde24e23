"""The SQL corpus in the paper's three-corpus comparison when it is prepared:
`paper_corpora` picks sql over code exactly when `tmcheck data prepare sql` has written it, and an
unprepared optional corpus is refused in one line naming the command."""

import pytest

from tmcheck.empirics.data.corpora import is_prepared, paper_corpora, prepared_path, require_prepared


def test_sql_replaces_code_only_when_prepared(tmp_path):
    assert paper_corpora(tmp_path) == ("code", "prose", "stories")
    assert not is_prepared("sql", tmp_path)
    path = prepared_path("sql", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('"SELECT 1;"\n')
    assert is_prepared("sql", tmp_path)
    assert paper_corpora(tmp_path) == ("sql", "prose", "stories")
    assert not is_prepared("prose-large", tmp_path)


def test_require_prepared(tmp_path):
    with pytest.raises(OSError, match=r"run `tmcheck data prepare sql`"):
        require_prepared("sql", tmp_path)
    with pytest.raises(OSError, match="prose-large"):
        require_prepared("prose-large", tmp_path)
    for name in ("code", "stories", "text:/x"):  # nothing to prepare: never refused here
        require_prepared(name, tmp_path)
    prepared_path("sql", tmp_path).parent.mkdir(parents=True)
    prepared_path("sql", tmp_path).write_text('"SELECT 1;"\n')
    require_prepared("sql", tmp_path)
