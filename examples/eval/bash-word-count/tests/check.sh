set -e
[ -x ./count_words.sh ]
[ "$(./count_words.sh sample.txt | tr -d '[:space:]')" = "9" ]
printf 'one\n\n two  three\n' > /tmp/crow-eval-wc-$$.txt
[ "$(./count_words.sh /tmp/crow-eval-wc-$$.txt | tr -d '[:space:]')" = "3" ]
rm -f /tmp/crow-eval-wc-$$.txt
