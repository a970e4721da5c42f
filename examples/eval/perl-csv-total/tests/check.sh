set -e
[ "$(perl total.pl orders.csv)" = "12.50" ]
printf 'item,amount\nx,1\ny,0.333\n' > "$LOGS/extra.csv"
[ "$(perl total.pl "$LOGS/extra.csv")" = "1.33" ]
