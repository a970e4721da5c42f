#!/bin/bash
# The reference solution (crow eval run --oracle runs it instead of the agent).
cd "${EVAL_APP_DIR:-/app}" || exit 1
cat > total.pl <<'PL'
use strict;
use warnings;
my $total = 0;
open(my $in, "<", $ARGV[0]) or die "cannot read $ARGV[0]: $!";
<$in>;
while (my $line = <$in>) {
  chomp $line;
  my (undef, $amount) = split /,/, $line;
  $total += $amount;
}
printf "%.2f\n", $total;
PL
