# Latency against market data rate as box plots (box p25-p75, bar p50,
# whiskers p1-p99; never mean +/- SD, which goes below zero on a skewed
# latency): BUY and SELL at the algo host, and switch latency measured
# from the hosts' stamps beside what the switch itself did (the
# emulator's truth) and its model. Log latency axes where p1..p99 span
# decades. Reads data/rates.dat by column name.
# A template: tapless report fills in the @KEY@ values.
title = '@TITLE@'
out = '@OUT@'
caption = @CAPTION@
switch_name = '@SWITCH_NAME@'
rates_bs = '@RATES_BUY@ @RATES_SELL@'
rates_truth = '@RATES_TRUTH@'
logx = @LOGX_RATE@
logy_bs = @LOGY_BS@
logy_sw = @LOGY_SW@
model = @MODEL_NS@
rmin = @RATE_MIN@
rmax = @RATE_MAX@
set datafile missing '-'
set datafile columnheaders
set xrange [rmin:rmax]
# Two series side by side at each rate; box widths a share of the rate on
# a log axis, of the axis else.
nudge(x, k) = logx ? x * 1.18**k : x + k * (rmax - rmin) / 40
bw(x) = logx ? x * 0.14 : (rmax - rmin) / 45
# Nothing at or below 0 on a log axis.
pos(v, lg) = (lg && v <= 0) ? NaN : v
empty = "set label 9 'no samples' at graph 0.5, 0.5 center; set yrange [0:1]; plot 2 notitle; unset label 9; set autoscale y"

do for [fmt in 'png svg'] {
	if (fmt eq 'png') {
		set terminal pngcairo size 1400,680 enhanced font 'sans,10'
	} else {
		set terminal svg size 1400,680 dynamic enhanced font 'sans,10' background rgb 'white'
	}
	set output out.'.'.fmt
	set multiplot layout 1,2 title title margins 0.06,0.98,0.24,0.9 spacing 0.07
	set label 100 caption at screen 0.01, screen 0.14 left noenhanced font ',9'
	if (logx) { set logscale x } else { unset logscale x }
	set grid
	set key top left
	set xlabel 'market data rate (messages/s)'

	set ylabel 'latency (µs)'
	set title 'BUY and SELL latency at the algo host'
	if (logy_bs) { set logscale y } else { unset logscale y }
	if (words(rates_bs) > 0) {
		plot 'data/rates.dat' using (nudge(column('rate'), -0.5)):(pos(column('buy_p25')/1e3, logy_bs)):(pos(column('buy_p1')/1e3, logy_bs)):(pos(column('buy_p99')/1e3, logy_bs)):(pos(column('buy_p75')/1e3, logy_bs)):(bw(column('rate'))) \
			with candlesticks whiskerbars fs solid 0.5 lc rgb 'steelblue' title 'BUY (tick to trade)', \
		     '' using (nudge(column('rate'), -0.5)):(column('buy_p50')/1e3):(column('buy_p50')/1e3):(column('buy_p50')/1e3):(column('buy_p50')/1e3):(bw(column('rate'))) \
			with candlesticks lc rgb 'black' lw 2 notitle, \
		     '' using (nudge(column('rate'), 0.5)):(pos(column('sell_p25')/1e3, logy_bs)):(pos(column('sell_p1')/1e3, logy_bs)):(pos(column('sell_p99')/1e3, logy_bs)):(pos(column('sell_p75')/1e3, logy_bs)):(bw(column('rate'))) \
			with candlesticks whiskerbars fs solid 0.5 lc rgb 'dark-orange' title 'SELL (fill to sell)', \
		     '' using (nudge(column('rate'), 0.5)):(column('sell_p50')/1e3):(column('sell_p50')/1e3):(column('sell_p50')/1e3):(column('sell_p50')/1e3):(bw(column('rate'))) \
			with candlesticks lc rgb 'black' lw 2 title 'p50'
	} else { eval empty }
	unset label 100

	set title 'Switch latency: measured, and what the switch did'
	set key bottom right opaque
	set ylabel 'switch latency (µs)'
	if (logy_sw) { set logscale y } else { unset logscale y }
	plot 'data/rates.dat' using (nudge(column('rate'), -0.5)):(pos(column('switch_p25')/1e3, logy_sw)):(pos(column('switch_p1')/1e3, logy_sw)):(pos(column('switch_p99')/1e3, logy_sw)):(pos(column('switch_p75')/1e3, logy_sw)):(bw(column('rate'))) \
		with candlesticks whiskerbars fs solid 0.5 lc rgb 'steelblue' title 'measured from host stamps (topology method)', \
	     '' using (nudge(column('rate'), -0.5)):(column('switch_p50')/1e3):(column('switch_p50')/1e3):(column('switch_p50')/1e3):(column('switch_p50')/1e3):(bw(column('rate'))) \
		with candlesticks lc rgb 'black' lw 2 notitle, \
	     '' using (nudge(column('rate'), 0.5)):(pos(column('topotruth_p25')/1e3, logy_sw)):(pos(column('topotruth_p1')/1e3, logy_sw)):(pos(column('topotruth_p99')/1e3, logy_sw)):(pos(column('topotruth_p75')/1e3, logy_sw)):(bw(column('rate'))) \
		with candlesticks whiskerbars fs solid 0.5 lc rgb 'forest-green' title (words(rates_truth) > 0 ? 'achieved: '.switch_name.', its own stamps' : ''), \
	     '' using (nudge(column('rate'), 0.5)):(column('topotruth_p50')/1e3):(column('topotruth_p50')/1e3):(column('topotruth_p50')/1e3):(column('topotruth_p50')/1e3):(bw(column('rate'))) \
		with candlesticks lc rgb 'black' lw 2 notitle, \
	     (model == model ? model / 1e3 : NaN) with lines dt 2 lw 2 lc rgb 'red' title (model == model ? sprintf('model: %g ns', model) : '')
	unset multiplot
	set output
}
