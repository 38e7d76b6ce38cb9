"""The one JSON encoding of kept results, kept views and parsed golds (klue_viz/core/exact_json.py): values come back of the
same types, and what JSON would change is refused. The expected texts are written out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from klue_viz.core.exact_json import decode, decoder, encode, exact, untagged


def test_tuples_and_bytes_are_tagged_in_the_text() -> None:
    assert encode(exact(("a", 1))) == '{"\\u0000tuple": ["a", 1]}'
    assert encode(exact(b"\x00\xffA")) == '{"\\u0000bytes": "AP9B"}'  # base64 of 00 ff 41
    assert encode(exact({"k": [("x",), None, "한국"]})) == '{"k": [{"\\u0000tuple": ["x"]}, null, "한국"]}'  # text stays text


@pytest.mark.parametrize("value", [("a", (1, 2)), [("t",), b"raw"], {"rows": [{"span": (3, 5), "text": "서울"}]}, (), b"", [[], {}],
                                   {"nested": {"deep": ((b"\x01",),)}}, 1.5, True, None, "\u0000tuple"],
                         ids=["nested tuples", "tuple and bytes", "gold rows", "empty tuple", "empty bytes", "empty list and dict",
                              "bytes in tuples", "float", "bool", "none", "the tag as a string"])
def test_a_value_comes_back_equal_and_of_the_same_types(value: object) -> None:
    back = decode(encode(exact(value)))
    assert back == value and repr(back) == repr(value)


@pytest.mark.parametrize("value", [{1: "a"}, {"a", "b"}, [object()], {"\u0000tuple": [1]}, {"\u0000bytes": "AA=="}, [{2: "b"}]],
                         ids=["int key", "set", "an object", "a dict using the tuple tag", "a dict using the bytes tag", "nested int key"])
def test_what_json_would_change_is_refused(value: object) -> None:
    with pytest.raises(TypeError):
        encode(exact(value))


def test_a_conversion_is_applied_at_every_depth_before_the_value_is_tagged() -> None:
    def numbers(value: object) -> object:
        return value.item() if isinstance(value, np.generic) else value

    assert encode(exact({"a": [np.int64(3), (np.bool_(True),)]}, numbers)) == '{"a": [3, {"\\u0000tuple": [true]}]}'
    with pytest.raises(TypeError):
        encode(exact([np.int64(3)]))  # without it a numpy integer has no JSON form


def test_an_object_is_untagged_only_when_the_tag_is_its_one_key() -> None:
    assert untagged({"\u0000tuple": [1, 2]}) == (1, 2)
    assert untagged({"\u0000bytes": "AP9B"}) == b"\x00\xffA"
    other = {"\u0000tuple": [1], "also": 2}
    assert untagged(other) is other
    assert decoder(lambda item: ("seen", untagged(item)))('{"\\u0000tuple": [1]}') == ("seen", (1,))
