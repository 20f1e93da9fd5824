# Cumulative distributions of BUY, SELL and switch latency per market data
# rate, p50, p99 and p99.9 marked; beside the switch latency measured, the
# emulator's truth for the same frames (dashed). The y axis is stretched
# towards 1 (equal room for 0.9, 0.99, 0.999) so that the tail can be read.
# Reads data/cdf-SERIES-RATE.dat and data/pct-SERIES-RATE.dat.
# A template: tapless report fills in the @KEY@ values.
title = '@TITLE@'
out = '@OUT@'
caption = @CAPTION@
rates_truth = '@RATES_TRUTH@'
rates_buy = '@RATES_BUY@'
rates_sell = '@RATES_SELL@'
rates_switch = '@RATES_SWITCH@'
logx_buy = @LOGX_BUY@
logx_sell = @LOGX_SELL@
logx_switch = @LOGX_SWITCH@
empty = "set label 9 'no samples' at graph 0.5, 0.5 center; set xrange [0:1]; plot 2 notitle; unset label 9; set autoscale x"
# CDF value y is drawn at -log10(1 - y): 0.9 at 1, 0.99 at 2, 0.999 at 3.
tail(y) = y >= 0.99999 ? 5 : -log10(1 - y)

do for [fmt in 'png svg'] {
	if (fmt eq 'png') {
		set terminal pngcairo size 1500,600 enhanced font 'sans,10'
	} else {
		set terminal svg size 1500,600 dynamic enhanced font 'sans,10' background rgb 'white'
	}
	set output out.'.'.fmt
	set multiplot layout 1,3 title title margins 0.05,0.98,0.25,0.9 spacing 0.06
	set label 100 caption at screen 0.01, screen 0.12 left noenhanced font ',9'
	set grid
	set key top left
	# room on the right for the marks' labels
	set offsets graph 0.02, graph 0.12, 0, 0
	set yrange [0:5]
	set ytics ('0' 0, '0.5' tail(0.5), '0.9' 1, '0.99' 2, '0.999' 3, '0.9999' 4, '1' 5)
	set ylabel 'cumulative fraction of samples'

	set title 'BUY latency'
	set xlabel 'latency (µs)'
	if (logx_buy) { set logscale x } else { unset logscale x }
	if (words(rates_buy) > 0) {
		plot for [i = 1:words(rates_buy)] sprintf('data/cdf-buy-%s.dat', word(rates_buy, i)) \
			using ($1/1000):(tail($2)) with steps lw 2 lc i title sprintf('%s msg/s', word(rates_buy, i)), \
		     for [i = 1:words(rates_buy)] sprintf('data/pct-buy-%s.dat', word(rates_buy, i)) \
			using ($1/1000):(tail($2)):3 with labels point pt 7 lc i tc lt i offset 1,-0.6 left font ',8' notitle
	} else { eval empty }
	unset label 100

	set title 'SELL latency'
	if (logx_sell) { set logscale x } else { unset logscale x }
	if (words(rates_sell) > 0) {
		plot for [i = 1:words(rates_sell)] sprintf('data/cdf-sell-%s.dat', word(rates_sell, i)) \
			using ($1/1000):(tail($2)) with steps lw 2 lc i title sprintf('%s msg/s', word(rates_sell, i)), \
		     for [i = 1:words(rates_sell)] sprintf('data/pct-sell-%s.dat', word(rates_sell, i)) \
			using ($1/1000):(tail($2)):3 with labels point pt 7 lc i tc lt i offset 1,-0.6 left font ',8' notitle
	} else { eval empty }

	set title 'Switch latency (topology method; truth dashed)'
	set xlabel 'latency (µs)'
	if (logx_switch) { set logscale x } else { unset logscale x }
	if (words(rates_switch) > 0) {
		plot for [i = 1:words(rates_switch)] sprintf('data/cdf-switch-%s.dat', word(rates_switch, i)) \
			using ($1/1000):(tail($2)) with steps lw 2 lc i title sprintf('%s msg/s', word(rates_switch, i)), \
		     for [i = 1:words(rates_switch)] sprintf('data/pct-switch-%s.dat', word(rates_switch, i)) \
			using ($1/1000):(tail($2)):3 with labels point pt 7 lc i tc lt i offset 1,-0.6 left font ',8' notitle, \
		     for [i = 1:words(rates_truth)] sprintf('data/cdf-truth-%s.dat', word(rates_truth, i)) \
			using (logx_switch && $1 <= 0 ? NaN : $1/1000):(tail($2)) with steps lw 1.5 dt 2 lc rgb 'black' title (i == 1 ? 'truth' : '')
	} else { eval empty }
	unset multiplot
	set output
}
