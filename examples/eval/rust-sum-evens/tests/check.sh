set -e
cp "$TESTS/check.rs" ./check_main.rs
rustc --edition 2021 -o /tmp/crow-eval-sum-$$ check_main.rs
rm -f check_main.rs
/tmp/crow-eval-sum-$$
rm -f /tmp/crow-eval-sum-$$
