"""The vectorised token test that decides whether the lax-token regular expressions must run."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from converters.batch.json_screen import _has_negative_exponent, holds

# bytes the tokens are made of, and their neighbours, so that near misses are common
TEXT = st.binary(max_size=60).map(lambda raw: bytes(b"NaIfnE e-:,[0\n"[c % 14] for c in raw))


@given(TEXT, st.sampled_from([b"NaN", b"Inf", b"e-", b"E-"]))
def test_a_token_is_found_exactly_where_a_text_search_finds_it(text, token):
    assert holds(np.frombuffer(text, dtype=np.uint8), token) is (token in text)


@given(TEXT)
def test_a_negative_exponent_is_found_exactly_where_a_text_search_finds_it(text):
    assert _has_negative_exponent(np.frombuffer(text, dtype=np.uint8)) is (b"e-" in text or b"E-" in text)
