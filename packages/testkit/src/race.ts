/**
 * The racing loop the sandbox attack tests start in the sandboxed shell: a perl script that swaps link `name` between
 * targets `a` and `b` with rename(2) (atomic: the link always exists, pointing at one or the other) until `stop`
 * exists, and touches `ready` once it runs. Arguments: name a b ready stop. perl is part of every Debian/Ubuntu base
 * system; a machine without it fails these tests rather than skipping them.
 */
export const SWAP_LINK_PERL = `my ($name, $a, $b, $ready, $stop) = @ARGV; my $t = "$name.swap"; my $i = 0;
until (-e $stop) { unlink $t; symlink(($i++ % 2) ? $b : $a, $t) or die "symlink: $!"; rename($t, $name) or die "rename: $!";
  if ($i == 2) { open(my $f, ">", $ready) or die; close $f } }`;
