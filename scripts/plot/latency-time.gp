# BUY, SELL and switch latency over time, seconds since each run's first
# stamp, one colour per market data rate; samples taken while a host was
# out of sync are open circles. Reads data/time-SERIES-RATE.dat.
# A template: tapless report fills in the @KEY@ values.
title = '@TITLE@'
out = '@OUT@'
caption = @CAPTION@
rates_buy = '@RATES_BUY@'
rates_sell = '@RATES_SELL@'
rates_switch = '@RATES_SWITCH@'
logy_buy = @LOGX_BUY@
logy_sell = @LOGX_SELL@
logy_switch = @LOGX_SWITCH@
empty = "set label 9 'no samples' at graph 0.5, 0.5 center; set xrange [0:1]; set yrange [0:1]; plot 2 notitle; unset label 9; set autoscale"

do for [fmt in 'png svg'] {
	if (fmt eq 'png') {
		set terminal pngcairo size 1100,1200 enhanced font 'sans,10'
	} else {
		set terminal svg size 1100,1200 dynamic enhanced font 'sans,10' background rgb 'white'
	}
	set output out.'.'.fmt
	set multiplot layout 3,1 title title margins 0.08,0.84,0.12,0.94 spacing 0.07
	set label 100 caption at screen 0.01, screen 0.05 left noenhanced font ',9'
	set grid
	set key outside right
	set xlabel 'time since the run started (s)'

	set title 'BUY latency'
	set ylabel 'latency (µs)'
	if (logy_buy) { set logscale y } else { unset logscale y }
	if (words(rates_buy) > 0) {
		plot for [i = 1:words(rates_buy)] sprintf('data/time-buy-%s.dat', word(rates_buy, i)) \
			using 1:($2/1000):($3 != 0 ? 7 : 6) with points pt variable ps 0.6 lc i notitle, \
		     for [i = 1:words(rates_buy)] 1/0 with points pt 7 ps 1.2 lc i title sprintf('%s msg/s', word(rates_buy, i))
	} else { eval empty }
	unset label 100

	set title 'SELL latency'
	if (logy_sell) { set logscale y } else { unset logscale y }
	if (words(rates_sell) > 0) {
		plot for [i = 1:words(rates_sell)] sprintf('data/time-sell-%s.dat', word(rates_sell, i)) \
			using 1:($2/1000):($3 != 0 ? 7 : 6) with points pt variable ps 0.6 lc i notitle, \
		     for [i = 1:words(rates_sell)] 1/0 with points pt 7 ps 1.2 lc i title sprintf('%s msg/s', word(rates_sell, i))
	} else { eval empty }

	set title 'Switch latency (topology method, venue → algo)'
	set ylabel 'latency (µs)'
	if (logy_switch) { set logscale y } else { unset logscale y }
	if (words(rates_switch) > 0) {
		plot for [i = 1:words(rates_switch)] sprintf('data/time-switch-%s.dat', word(rates_switch, i)) \
			using 1:($2/1000):($3 != 0 ? 7 : 6) with points pt variable ps 0.3 lc i notitle, \
		     for [i = 1:words(rates_switch)] 1/0 with points pt 7 ps 1.2 lc i title sprintf('%s msg/s', word(rates_switch, i))
	} else { eval empty }
	unset multiplot
	set output
}
