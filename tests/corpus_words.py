"""corpus_words - words for the synthetic corpora of the shell tests (0024, 0042, 0082).

letters(n) spells n in base 26 with a-z: the tokenizer drops digits (text.digits), so words
made of letters only keep every document's words distinct and countable.
    "$PY" - "$(dirname "$0")" ... <<'EOF'
    import sys; sys.path.insert(0, sys.argv[1]); from corpus_words import letters
"""


def letters(n):
    s = ""
    while True:
        s = "abcdefghijklmnopqrstuvwxyz"[n % 26] + s
        n //= 26
        if n == 0:
            return s
