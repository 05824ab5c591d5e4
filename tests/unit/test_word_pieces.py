"""retrievers.semantic.word_pieces: each distinct word tokenized once gives exactly the packaged
tokenizer's ids, on real code and on the texts the shortcut must hand to the tokenizer whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from retrievers.semantic import word_pieces
from retrievers.semantic.word_pieces import WordPieceIds, word_piece_ids

MODEL = Path(__file__).resolve().parents[2] / "retrievers" / "semantic" / "data" / "static-minilm-code"
SAMPLE = Path(__file__).resolve().parents[1] / "workspace"
ODD = [
    "", "   \n\t ", "def größeWert(maßZahl): return 2", "façade naïve café", "x\x0cy\x0bz", "a\x00b\x7fc",
    "[UNK] token [PAD]", "[unk] and [pad] in lower case", "emoji 🙂 and 中文 names", "a" * 150 + " tail",
    "HTTPResponse_v2 getURL2Path __init__ $scope #{x} 0x1F 3.14e-10", "tab\tsep\r\nlines",
    "mixed ascii then é", "src/transformers/…/modeling_bert.py\nclass BertModel:", "nbsp\u00a0split",
    "line\u2028sep para\u2029sep", "next\x85line", "zero\u200bwidth", "ideo\u3000space", "naïve_fn(x)",
    "ÉCOLE École", "İstanbul ǅemal ΣΟΦΟΣ", "a\ufffdb", "tab\x0cform\x1fsep",
    "'''doc''' \"\"\"quoted\"\"\" `tick` ~!@#$%^&*()_+-=[]{}|;:,.<>/?",
]


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    tok = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def reference(tok: Tokenizer, texts: list[str]) -> list[list[int]]:
    return [list(e.ids) for e in tok.encode_batch_fast(texts, add_special_tokens=False)]


def code_texts() -> list[str]:
    """Every sample workspace file, whole and in 7-line pieces (real code, docs and config)."""
    out: list[str] = []
    for path in sorted(p for p in SAMPLE.rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", "replace")
        lines = text.splitlines(keepends=True)
        out.append(text)
        out.extend("".join(lines[i : i + 7]) for i in range(0, len(lines), 7))
    return out


def test_the_packaged_tokenizer_gets_the_shortcut(tokenizer: Tokenizer) -> None:
    assert isinstance(word_piece_ids(tokenizer, MODEL / "tokenizer.json"), WordPieceIds)


def test_code_gets_the_tokenizer_s_ids(tokenizer: Tokenizer) -> None:
    texts = code_texts()
    assert len(texts) > 150
    words = word_piece_ids(tokenizer, MODEL / "tokenizer.json")
    assert words is not None
    assert words.ids(texts) == reference(tokenizer, texts)
    assert words.ids(texts) == reference(tokenizer, texts)  # (again, every word now remembered)


def test_texts_the_shortcut_cannot_read_get_the_tokenizer_s_ids(tokenizer: Tokenizer) -> None:
    words = word_piece_ids(tokenizer, MODEL / "tokenizer.json")
    assert words is not None
    assert words.ids(ODD) == reference(tokenizer, ODD)
    for text in ODD:  # one at a time too (the order of a batch's two passes is kept)
        assert words.ids([text, "plain words"]) == reference(tokenizer, [text, "plain words"])


def test_a_full_cache_starts_over_with_the_same_ids(tokenizer: Tokenizer,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(word_pieces, "MAX_WORDS", 5)
    words = word_piece_ids(tokenizer, MODEL / "tokenizer.json")
    assert words is not None
    texts = code_texts()[:40]
    got = [words.ids([t])[0] for t in texts]
    assert got == reference(tokenizer, texts)
    assert words.ids(["alpha beta"]) == reference(tokenizer, ["alpha beta"])
    assert sorted(words._pieces.by_text) == ["alpha", "beta"]  # (the full cache was cleared first)


def test_arrays_hold_each_text_s_first_ids_up_to_the_limit(tokenizer: Tokenizer) -> None:
    """`id_arrays` (what the static tier's mean vectors read): the same ids one after another, each
    text cut at `limit` as `ids[:limit]` cuts it, with every text's count, odd texts among them."""
    words = word_piece_ids(tokenizer, MODEL / "tokenizer.json")
    assert words is not None
    texts = [*code_texts()[:60], *ODD]
    expected = reference(tokenizer, texts)
    assert any(len(ids) > 40 for ids in expected) and any(not ids for ids in expected)
    for limit in (None, 40, 1):
        flat, counts = words.id_arrays(texts, limit)
        kept = [ids if limit is None else ids[:limit] for ids in expected]
        assert counts.tolist() == [len(ids) for ids in kept]
        assert flat.tolist() == [i for ids in kept for i in ids]
    flat, counts = words.id_arrays([])
    assert flat.tolist() == [] and counts.tolist() == []


def test_another_pipeline_gets_no_shortcut(tokenizer: Tokenizer, tmp_path: Path) -> None:
    config = json.loads((MODEL / "tokenizer.json").read_text())
    config["normalizer"] = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                            "strip_accents": None, "lowercase": False}  # a cased vocabulary
    (tmp_path / "tokenizer.json").write_text(json.dumps(config))
    assert word_piece_ids(tokenizer, tmp_path / "tokenizer.json") is None
    assert word_piece_ids(tokenizer, tmp_path / "missing.json") is None
