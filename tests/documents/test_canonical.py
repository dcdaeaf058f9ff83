"""Canonical JSON and digests must be byte-identical to the 0.2.6 reference.

Golden vectors are the reference's published digests;
the other expected strings were produced by the reference's ``stableStringify``
under node 20 (ICU 78) and are checked again by the differential test at the
end, which runs only when ``AGC_REFERENCE_DIR`` points at a reference checkout
with a built ``dist/`` and ``node`` is on PATH.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_graph import canonical
from agent_graph.canonical import (
    digest_bytes,
    digest_text,
    digest_value,
    js_number,
    js_sorted,
    locale_sort_key,
    locale_sorted,
    stable_stringify,
)
from agent_graph.documents.files import digest_file
from agent_graph.errors import AgentGraphError

DIGEST = re.compile(r"sha256:[0-9a-f]{64}\Z")

# --- golden vectors: examples/getting-started, graph `main` ------------------

GETTING_STARTED_FILES = [
    [
        "actions/prepare.yaml",
        "sha256:9df822ee5bd4999758cf1d798cc7386d866ec4a3b5e05aa02b5e1864a9b45918",
    ],
    ["graphs/main.yaml", "sha256:345feb261ad65e5a6b56f49c8690f1d204228269a1d20317117ef41e49b57281"],
    [
        "resources/prepare.md",
        "sha256:85fbf9d8d12d6deb43a080ebb2a6e85536b7954fea9f5e2d4943ff6c6a7c9340",
    ],
    [
        "skills/operator/SKILL.md",
        "sha256:51190f865acfa21f8b1a2775cadee49bca95d05ba57eede9bed3aa69174bf654",
    ],
]
GRAPH_DIGEST = "sha256:f537d5bc86e0b886ea1fa778fb90515add8e028fbe12d0401fa99a90882007d4"
EMPTY_REVISION = "sha256:d29a7a271b95c7dc7f19d66cd6c13fc60eb20b3a5fc8e613d478fc5b6187597c"


def test_graph_digest_golden_vector() -> None:
    # Built in a scrambled key order on purpose: the digest must not care.
    value = {
        "provider": {"version": "0.1.0", "id": "example.getting-started"},
        "graph": "main",
        "files": GETTING_STARTED_FILES,
    }
    text = stable_stringify(value)
    assert text.startswith('{"files":[["actions/prepare.yaml","sha256:9df8')
    assert '5918"],["graphs/main.yaml","sha256:345f' in text
    assert text.endswith(
        '"]],"graph":"main","provider":{"id":"example.getting-started","version":"0.1.0"}}'
    )
    assert digest_value(value) == GRAPH_DIGEST


def test_graph_file_list_is_locale_ordered() -> None:
    paths = [p for p, _ in GETTING_STARTED_FILES]
    assert locale_sorted(reversed(paths)) == paths


def test_revision_golden_vector_empty_input() -> None:
    value = {
        "provider": GRAPH_DIGEST,
        "graphId": "main",
        "entry": "default",
        "facts": {},
        "outcomes": {},
        "authorities": [],
    }
    assert stable_stringify(value) == (
        '{"authorities":[],"entry":"default","facts":{},"graphId":"main","outcomes":{},'
        f'"provider":"{GRAPH_DIGEST}"}}'
    )
    assert digest_value(value) == EMPTY_REVISION


def test_revision_golden_vector_with_facts() -> None:
    value = {
        "provider": GRAPH_DIGEST,
        "graphId": "main",
        "entry": "default",
        "facts": {"b": 1, "a": {"z": True, "y": None}},
        "outcomes": {"main/prepare": "completed"},
        "authorities": ["x"],
    }
    assert '"facts":{"a":{"y":null,"z":true},"b":1}' in stable_stringify(value)
    assert digest_value(value) == (
        "sha256:95e134010c04e41dc80d09251c7d449ada5bb5d27aa38b13dcada6bc50622eae"
    )


def test_route_id_golden_vector() -> None:
    value = {"revision": EMPTY_REVISION, "graph": "main", "node": "prepare", "callPath": []}
    assert stable_stringify(value) == (
        f'{{"callPath":[],"graph":"main","node":"prepare","revision":"{EMPTY_REVISION}"}}'
    )
    assert "route:" + digest_value(value)[7:27] == "route:aac7c35f224e69e04aaf"


# --- key order --------------------------------------------------------------


def test_array_index_keys_are_hoisted() -> None:
    value = {
        "b": 1, "10": 2, "9": 3, "a": 4, "-1": 5, "01": 6, "4294967295": 7,
        "4294967294": 8, "1.5": 9, "B": 10, "_": 11,
    }  # fmt: skip
    assert stable_stringify(value) == (
        '{"9":3,"10":2,"4294967294":8,"_":11,"-1":5,"01":6,"1.5":9,"4294967295":7,'
        '"a":4,"b":1,"B":10}'
    )
    assert digest_value(value) == (
        "sha256:952834927c9194c5cba2da2d6e429a118ab27de876930c771cc1a72f2b6bbd00"
    )


def test_verified_ascii_orders() -> None:
    expected = [
        "main_b", "main-b", "main.b", "main/a1", "main/a10", "main/a2", "main/b", "main/B",
        "Main/b", "mainb",
    ]  # fmt: skip
    shuffled = expected[:]
    random.Random(7).shuffle(shuffled)
    assert locale_sorted(shuffled) == expected
    assert locale_sorted(["ab", "a-b"]) == ["a-b", "ab"]
    assert locale_sorted(["item2", "item10"]) == ["item10", "item2"]
    assert locale_sorted(["main_x", "Main"]) == ["Main", "main_x"]
    assert locale_sorted(["é", "B", "b", "A", "a", "9", "10", "-y", "_x"]) == [
        "_x", "-y", "10", "9", "a", "A", "b", "B", "é",
    ]  # fmt: skip


def test_printable_ascii_primary_order() -> None:
    symbols = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789"
    assert "".join(locale_sorted(reversed(symbols))) == symbols
    assert locale_sorted(["b", "B", "a", "A", "z", "Z"]) == ["a", "A", "b", "B", "z", "Z"]
    # A proper prefix comes first; case is only a tie-breaker after all letters.
    assert locale_sorted(["ab", "a", "Ab", "aB", "AB"]) == ["a", "ab", "aB", "Ab", "AB"]


def test_ascii_fast_path_keys_equal_pyuca_keys() -> None:
    # Mixed ASCII / non-ASCII key sets compare fast-path keys with pyuca keys,
    # so the two must be the same numbers (in the packed form both are compared in).
    collator = canonical._pyuca()
    rng = random.Random(11)
    printable = [chr(c) for c in range(0x20, 0x7F)]
    samples = ["", *printable]
    samples += ["".join(rng.choices(printable, k=rng.randint(1, 12))) for _ in range(500)]
    for s in samples:
        assert locale_sort_key(s) == canonical.pack_weights(collator.sort_key(s)), s


NON_ASCII_KEYS_1 = {
    "é": 1, "e": 2, "E": 3, "ß": 4, "ss": 5, "SS": 6, "中": 7, "文": 8, "😀": 9, "\ue000": 10,
    "e\u0301": 11, "z": 12, "a": 13, "Z": 14, "ä": 15, "Ä": 16, "œ": 17, "oe": 18,
}  # fmt: skip
NON_ASCII_KEYS_2 = {
    "中文": 1, "中国": 2, "文件": 3, "a中": 4, "Ω": 5, "ω": 6, "я": 7, "Я": 8, "ا": 9,
    "한": 10, "あ": 11, "ア": 12, "\u0001x": 13, "x": 14, "\tx": 15, " x": 16,
}  # fmt: skip


@pytest.mark.parametrize(
    ("value", "text", "digest"),
    [
        (
            NON_ASCII_KEYS_1,
            '{"😀":9,"a":13,"ä":15,"Ä":16,"e":2,"E":3,"é":1,"e\u0301":11,"oe":18,"œ":17,'
            '"ss":5,"SS":6,"ß":4,"z":12,"Z":14,"中":7,"文":8,"\ue000":10}',
            "sha256:69c5d822de6d8c298c8d2209694834e4495ff54586ba58cae9d5782f9aac0f49",
        ),
        (
            NON_ASCII_KEYS_2,
            '{"\\tx":15," x":16,"a中":4,"\\u0001x":13,"x":14,"ω":6,"Ω":5,"я":7,"Я":8,"ا":9,'
            '"한":10,"あ":11,"ア":12,"中国":2,"中文":1,"文件":3}',
            "sha256:dc7efea0760f9972c2b8cabfe2e454e69d43077346583b05b7fce9df8dbc0d0f",
        ),
        # Canonically equivalent keys compare equal: input order decides.
        (
            {"e\u0301": 1, "é": 2},
            '{"e\u0301":1,"é":2}',
            "sha256:c2635d7e15e25b90abc8b3543d92f0ffcee0644372d8b662a0775f88d43278e5",
        ),
        (
            {"é": 1, "e\u0301": 2},
            '{"é":1,"e\u0301":2}',
            "sha256:f126472a603049b5f986bb8f35ba8b5fbace9e37c2d5b2abf5ad131a166835b6",
        ),
    ],
)
def test_non_ascii_keys(value: dict[str, Any], text: str, digest: str) -> None:
    assert stable_stringify(value) == text
    assert digest_value(value) == digest


def test_han_ideographs_follow_radical_stroke_order() -> None:
    # ICU root orders by radical and stroke count, not by code point:
    # 义 U+4E49 before 丹 U+4E39, 养 U+517B before 兺 U+517A, 卄 U+5344 before 不 U+4E0D.
    assert locale_sorted(["丹", "义"]) == ["义", "丹"]
    assert locale_sorted(["兺", "养"]) == ["养", "兺"]
    assert locale_sorted(["不", "卄"]) == ["卄", "不"]
    assert js_sorted(["丹", "义"]) == ["丹", "义"]
    assert locale_sorted(["文件", "中文", "中国"]) == ["中国", "中文", "文件"]
    assert stable_stringify({"丹": 1, "义": 2, "a": 3}) == '{"a":3,"义":2,"丹":1}'


def test_ignorable_controls_and_combining_marks() -> None:
    # U+0001 is ignorable: "\x01x" ties with "x" and keeps input order.
    assert locale_sorted(["x", "\x01x"]) == ["x", "\x01x"]
    assert locale_sorted(["\x01x", "x"]) == ["\x01x", "x"]
    # Combining marks in different canonical order are the same text.
    assert locale_sort_key("e\u0323\u0301") == locale_sort_key("e\u0301\u0323")
    # An accent outranks case: "é" > "E" but "é" < "F".
    assert locale_sorted(["F", "é", "E", "e"]) == ["e", "E", "é", "F"]


def test_js_default_sort_is_utf16_order() -> None:
    assert js_sorted(["\ue000", "😀", "a", "B"]) == ["B", "a", "😀", "\ue000"]
    assert sorted(["\ue000", "😀"]) == ["\ue000", "😀"]  # Python's order differs


def test_non_string_keys_become_js_property_names() -> None:
    value = {1: "one", None: "null", 2.5: "x", False: "no", "a": "a", 1e21: "big"}
    assert stable_stringify(value) == (
        '{"1":"one","1e+21":"big","2.5":"x","a":"a","false":"no","null":"null"}'
    )


def test_large_objects_bypass_the_key_cache() -> None:
    keys = [f"k{i}" for i in range(200)] + ["3", "1"]
    value = {k: i for i, k in enumerate(reversed(keys))}
    members = json.loads(stable_stringify(value))
    assert list(members)[:2] == ["1", "3"]
    assert list(members)[2:5] == ["k0", "k1", "k10"]


# --- numbers ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (0, "0"), (-0.0, "0"), (1.0, "1"), (-1.5, "-1.5"), (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1e+21"), (1e20, "100000000000000000000"), (123e18, "123000000000000000000"),
        (1e-6, "0.000001"), (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (-1e-7, "-1e-7"),
        (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
        (2**53, "9007199254740992"), (2**53 + 1, "9007199254740992"),
        (2**53 + 2, "9007199254740994"), (2**60, "1152921504606847000"),
        (-(2**60), "-1152921504606847000"), (10**21, "1e+21"), (1e16, "10000000000000000"),
        (1.2345678901234567e-5, "0.000012345678901234568"), (100, "100"),
        (0.000001234, "0.000001234"), (123.456, "123.456"), (4294967296, "4294967296"),
        (1e300, "1e+300"), (9.5367431640625e-7, "9.5367431640625e-7"),
        (1 / 3, "0.3333333333333333"), (25e20, "2.5e+21"), (1e15 + 0.3, "1000000000000000.2"),
        (float("nan"), "NaN"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity"),
        (10**400, "Infinity"), (-(10**400), "-Infinity"),
    ],
)  # fmt: skip
def test_js_number(number: float, text: str) -> None:
    assert js_number(number) == text


def test_js_number_rejects_bool() -> None:
    with pytest.raises(TypeError):
        js_number(True)


def test_json_numbers_and_literals() -> None:
    value = [float("nan"), float("inf"), float("-inf"), -0.0, True, False, None, 1, 1.0, 10**400]
    assert stable_stringify(value) == "[null,null,null,0,true,false,null,1,1,null]"


# --- strings ----------------------------------------------------------------


def test_string_escapes_match_json_stringify() -> None:
    value = {"s": '\x00\x07\b\t\n\x0b\f\r\x1f"\\/\x7f\u2028\u2029é😀\ud800x\udc00\ud83d'}
    expected = (
        '{"s":"\\u0000\\u0007\\b\\t\\n\\u000b\\f\\r\\u001f\\"\\\\/\x7f\u2028\u2029é😀'
        '\\ud800x\\udc00\\ud83d"}'
    )
    assert stable_stringify(value) == expected
    assert digest_value(value) == (
        "sha256:e48518796ccd0df0f7cda30063f02ff7deee372d3b45aed48bdbb9780fa4f398"
    )


def test_surrogate_pair_code_points_are_one_character() -> None:
    # A str holding a UTF-16 pair as two code points means the astral char to JS.
    assert stable_stringify("\ud83d\ude00") == '"😀"'
    assert locale_sort_key("\ud83d\ude00") == locale_sort_key("😀")
    assert js_sorted(["\ue000", "\ud83d\ude00"]) == ["\ud83d\ude00", "\ue000"]


def test_top_level_scalars() -> None:
    assert stable_stringify("a\nb") == '"a\\nb"'
    assert stable_stringify(None) == "null"
    assert stable_stringify(True) == "true"
    assert stable_stringify(3.0) == "3"
    assert stable_stringify([]) == "[]"
    assert stable_stringify({}) == "{}"
    assert stable_stringify(("a", 1)) == '["a",1]'


# --- structure --------------------------------------------------------------


@pytest.mark.slow
def test_deep_nesting_does_not_recurse() -> None:
    depth = 100_000
    nested_list: Any = []
    for _ in range(depth):
        nested_list = [nested_list, 1]
    text = stable_stringify(nested_list)
    assert text == "[" * depth + "[]" + ",1]" * depth
    nested_dict: Any = {}
    for _ in range(depth):
        nested_dict = {"b": nested_dict, "a": 0}
    assert stable_stringify(nested_dict) == '{"a":0,"b":' * depth + "{}" + "}" * depth


def test_shared_references_are_not_cycles() -> None:
    shared = {"y": 1}
    assert stable_stringify({"a": shared, "b": [shared, shared]}) == (
        '{"a":{"y":1},"b":[{"y":1},{"y":1}]}'
    )


def test_cycle_is_a_structured_error() -> None:
    doc: dict[str, Any] = {"facts": {"list": [1]}}
    doc["facts"]["list"].append(doc["facts"])
    with pytest.raises(AgentGraphError) as info:
        stable_stringify(doc)
    assert info.value.code == "value-not-serializable"
    assert info.value.diagnostics[0].pointer == "/facts/list/1"
    assert "circular" in info.value.message


def test_unsupported_value_is_a_structured_error() -> None:
    with pytest.raises(AgentGraphError) as info:
        digest_value({"a/b": [1, {"x~": {1, 2}}]})
    assert info.value.code == "value-not-serializable"
    assert info.value.diagnostics[0].pointer == "/a~1b/1/x~0"
    with pytest.raises(AgentGraphError) as info:
        stable_stringify({"a": {(1, 2): 3}})
    assert info.value.diagnostics[0].pointer == "/a"
    with pytest.raises(AgentGraphError):
        stable_stringify(object())


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False,
    allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children,
    max_size=4),
    max_leaves=20,
)  # fmt: skip


def _without_surrogates(value: Any) -> bool:
    return not re.search("[\ud800-\udfff]", json.dumps(value, ensure_ascii=False))


def _as_doubles(value: Any) -> Any:
    """Numbers as JavaScript sees them (JSON may print 1.0 as the int 1)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict):
        return {k: _as_doubles(v) for k, v in value.items()}
    return [_as_doubles(v) for v in value]


@given(JSON_VALUES)
def test_output_is_json_for_the_same_value(value: Any) -> None:
    text = stable_stringify(value)
    assert _as_doubles(json.loads(text)) == _as_doubles(value)
    if _without_surrogates(value):
        assert digest_value(value) == digest_text(text)


# --- digests ----------------------------------------------------------------


def test_digest_formats() -> None:
    assert digest_text("") == (
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    assert digest_text("é") == "sha256:" + hashlib.sha256("é".encode()).hexdigest()
    assert digest_bytes(b"\xff\x00") == "sha256:" + hashlib.sha256(b"\xff\x00").hexdigest()
    for digest in (digest_text("x"), digest_bytes(b""), digest_value({"a": [1]})):
        assert DIGEST.match(digest)


def test_digest_text_replaces_lone_surrogates_like_node() -> None:
    # node hashes a lone surrogate as U+FFFD (EF BF BD).
    assert digest_text("\ud800") == (
        "sha256:83d544ccc223c057d2bf80d3f2a32982c32c3c0db8e2674820da5064783fb097"
    )
    assert digest_text("a\ud83d\ude00") == digest_text("a😀")


@pytest.mark.parametrize("size", [0, 1, 4096, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 << 20])
def test_digest_file(tmp_path: Path, size: int) -> None:
    # around the read size: a file read whole in one call, in exactly one, and in several
    path = tmp_path / "data.bin"
    payload = (bytes(range(256)) * (size // 256 + 1))[:size]
    path.write_bytes(payload)
    assert digest_file(path) == "sha256:" + hashlib.sha256(payload).hexdigest()
    assert digest_file(path) == digest_bytes(payload)


def test_digest_file_missing_is_structured(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(AgentGraphError) as info:
        digest_file(missing)
    assert info.value.code == "file-read-failed"
    assert str(missing) in info.value.message
    assert info.value.diagnostics[0].path == str(missing)


def test_import_is_light() -> None:
    code = (
        "import sys, agent_graph.canonical as c; c.digest_value({'a': [1, 'b']});"
        "heavy = {'pyuca', 'yaml', 'jsonschema', 'click', 'lark'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    src = str(Path(canonical.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip() == "[]"


# --- differential test against the reference (node) -------------------------

_REFERENCE_DIR = os.environ.get("AGC_REFERENCE_DIR")
_NODE = shutil.which("node")
_ORACLE = Path(__file__).parents[1] / "oracle" / "canonical_oracle.mjs"
needs_reference = pytest.mark.skipif(
    not (_REFERENCE_DIR and _NODE and (Path(_REFERENCE_DIR) / "dist" / "index.js").is_file()),
    reason="AGC_REFERENCE_DIR (with a built dist/) and node are needed",
)
_SPECIAL = {"\x00NaN": float("nan"), "\x00Infinity": float("inf"), "\x00-Infinity": float("-inf")}


def _run_oracle(mode: str, lines: list[str]) -> list[str]:
    assert _NODE
    assert _REFERENCE_DIR
    done = subprocess.run(
        [_NODE, str(_ORACLE), _REFERENCE_DIR, mode],
        input="\n".join(lines) + "\n",
        capture_output=True,
        encoding="utf-8",
        env={**os.environ, "LC_ALL": "C.UTF-8"},  # the reference is locale dependent
        check=True,
    )
    out = done.stdout.rstrip("\n").split("\n")  # not splitlines(): U+2028 is data
    assert len(out) == len(lines), done.stderr
    return out


def _transport(value: Any) -> Any:
    """The value with non-finite floats as marker strings (JSON cannot carry them)."""
    if isinstance(value, float) and value != value:
        return "\x00NaN"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "\x00Infinity" if value > 0 else "\x00-Infinity"
    if isinstance(value, dict):
        return {k: _transport(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_transport(v) for v in value]
    return value


ASCII_KEY_PARTS = [*"abABz_-./: 019", "x1", "x10"]
INDEX_LIKE = ["0", "1", "9", "10", "01", "-1", "1.5", "4294967294", "4294967295", "007"]
# Everything pyuca collates like ICU root (see canonical.py's module docstring).
NON_ASCII_PARTS = [
    "é", "e\u0301", "É", "ß", "ẞ", "ss", "ä", "Ä", "œ", "Ω", "ω", "я", "Я", "ا", "한", "あ", "ア",
    "中", "文", "国", "件", "个", "乙", "😀", "🚀", "🎉", "\ue000", "\u0301", "\u0323", "\u00a0",
    "\t", "\x01", "ü", "ﬀ", "ｱ", "·", "€", "°", "µ", "№",
]  # fmt: skip
STRING_PARTS = [
    "plain", "\x00", "\x1f", "\n", '"', "\\", "/", "\x7f", "\u2028", "é", "😀", "\ud800",
    "\udc00", "\ud83d", "中文", " ",
]  # fmt: skip


def _number(rng: random.Random) -> float | int:
    pick = rng.random()
    if pick < 0.25:
        return rng.randint(-1000, 1000)
    if pick < 0.35:
        big: list[int] = [2**53, 2**53 + 1, 2**60, -(2**63), 10**21, 10**400, 4294967295]
        return rng.choice(big)
    if pick < 0.45:
        special = [-0.0, 5e-324, 0.1 + 0.2, 1e21, 1e-7, 1e-6, 1.7976931348623157e308]
        special += [float("nan"), float("inf"), float("-inf")]
        return rng.choice(special)
    if pick < 0.55:
        return float(rng.randint(-(10**6), 10**6))
    return rng.choice([-1, 1]) * rng.random() * 10.0 ** rng.randint(-30, 30)


def _random_key(rng: random.Random, parts: list[str]) -> str:
    if rng.random() < 0.15:
        return rng.choice(INDEX_LIKE)
    if rng.random() < 0.05:
        return chr(rng.randint(0x4E00, 0x9FFF)) + chr(rng.randint(0x4E00, 0x9FFF))
    return "".join(rng.choice(parts) for _ in range(rng.randint(0, 4)))


def _random_doc(rng: random.Random, parts: list[str], depth: int = 0) -> Any:
    kind = rng.random() if depth < 5 else 1.0
    if kind < 0.3:
        return {
            _random_key(rng, parts): _random_doc(rng, parts, depth + 1)
            for _ in range(rng.randint(0, 7))
        }
    if kind < 0.45:
        return [_random_doc(rng, parts, depth + 1) for _ in range(rng.randint(0, 5))]
    if kind < 0.65:
        return "".join(rng.choice(STRING_PARTS) for _ in range(rng.randint(0, 5)))
    if kind < 0.9:
        return _number(rng)
    return rng.choice([True, False, None])


def _documents(count: int) -> list[Any]:
    rng = random.Random(20240531)
    docs: list[Any] = []
    for i in range(count):
        parts = ASCII_KEY_PARTS if i % 2 == 0 else ASCII_KEY_PARTS + NON_ASCII_PARTS
        docs.append(
            {_random_key(rng, parts): _random_doc(rng, parts) for _ in range(rng.randint(1, 8))}
        )
    return docs


@pytest.mark.slow
@needs_reference
def test_differential_stable_stringify_against_reference() -> None:
    docs = _documents(6000)
    lines = [json.dumps(_transport(d), ensure_ascii=True) for d in docs]
    expected = _run_oracle("stringify", lines)
    mismatches = []
    for doc, line in zip(docs, expected, strict=True):
        text, _, digest = line.rpartition("\t")
        mine = stable_stringify(doc)
        if mine.encode("utf-8") != text.encode("utf-8") or digest_value(doc) != digest:
            mismatches.append((text, mine))
    assert not mismatches, mismatches[:3]


@needs_reference
def test_differential_sorting_against_reference() -> None:
    rng = random.Random(99)
    parts = ASCII_KEY_PARTS + NON_ASCII_PARTS + INDEX_LIKE
    lists = [[_random_key(rng, parts) for _ in range(rng.randint(2, 10))] for _ in range(3000)]
    lists += [[chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(10)] for _ in range(500)]
    lists.append(["\ue000", "😀", "\uffff", "\U0010ffff", "a", "\ufffe", "\t", "", "\ufdd0"])
    lists.append(["\ud800", "a\udc00", "\udfff", "b", "\U000f0000", "\ud83d"])
    out = _run_oracle("sort", [json.dumps(x) for x in lists])
    for strings, line in zip(lists, out, strict=True):
        collated, default = json.loads(line)
        assert locale_sorted(strings) == collated, strings
        assert js_sorted(strings) == default, strings


def _load_han_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_han_table", _ORACLE.with_name("make_han_table.py")
    )
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_reference
def test_embedded_han_table_matches_node() -> None:
    tool = _load_han_tool()
    order: list[int] = tool.han_order_from_node(_NODE)
    ranks = canonical._han_ranks()
    assert sorted(ranks, key=ranks.__getitem__) == order
    assert tool.encode(order) == "".join(canonical._HAN_ORDER)


@needs_reference
def test_getting_started_file_digests() -> None:
    assert _REFERENCE_DIR
    root = Path(_REFERENCE_DIR) / "examples" / "getting-started"
    for rel, digest in GETTING_STARTED_FILES:
        assert digest_file(root / rel) == digest
