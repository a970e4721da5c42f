set -e
cc -o /tmp/crow-eval-reverse-$$ reverse.c
[ "$(/tmp/crow-eval-reverse-$$ hello)" = "olleh" ]
[ "$(/tmp/crow-eval-reverse-$$ ab)" = "ba" ]
[ "$(/tmp/crow-eval-reverse-$$ x)" = "x" ]
rm -f /tmp/crow-eval-reverse-$$
