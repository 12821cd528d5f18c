"""The table of canonical move texts (`notation.CANONICAL`) reads every text as the words
of the text read one by one (`parse_words`) do, writes every move of it as its fields
written one by one (`format_fields`) do, and `split` keeps each as one move: the table
only spares a record's reader the taking apart and writing of its commonest lines."""

from __future__ import annotations

from tablelog.replay.games.mercado_de_lisboa import notation
from tests.support.play import new_position


def test_every_canonical_text_reads_as_its_words() -> None:
    state = new_position("mercado-de-lisboa", 2).state
    # Every move but a customer tile's: 5 draws, takes; 5 x 25 x 7 stands; 6 flips;
    # 6 x 25 restaurants; 4 x 15 reveals; coin and swap.
    assert len(notation.CANONICAL) == 5 + 5 + 5 * 25 * 7 + 6 + 6 * 25 + 4 * 15 + 2
    for text, build in notation.CANONICAL.items():
        move = build()
        assert move == notation.parse_words(text, state), text
        assert notation.parse(text, state) == move
        assert notation.format_move(move, state) == text
        assert notation.format_fields(move, state) == text
        assert notation.split(text, state) == (text,)


def test_other_spellings_are_read_by_their_words() -> None:
    state = new_position("mercado-de-lisboa", 2).state
    for text in ("Stand Fish B3 take grape", "s fish b3 t grape", "stand fish b3 grape"):
        assert text not in notation.CANONICAL
        assert notation.parse(text, state) == notation.CANONICAL["stand fish b3 take grape"]()
    assert "customer 2 fish+flower w3" not in notation.CANONICAL  # read against the tiles
