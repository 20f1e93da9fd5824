# Frequency distributions of BUY, SELL and switch latency, one curve per
# market data rate (the FTTC report's "jitter" graphs: the taller and
# thinner, the better). Reads data/hist-SERIES-RATE.dat (bins made by
# tapless report: bin centre ns, count, fraction, density per ns, density
# per decade; the last on a log axis, where equal areas are equal shares).
# A template: tapless report fills in the @KEY@ values.
title = '@TITLE@'
set datafile missing '-'
out = '@OUT@'
caption = @CAPTION@
rates_buy = '@RATES_BUY@'
rates_sell = '@RATES_SELL@'
rates_switch = '@RATES_SWITCH@'
logx_buy = @LOGX_BUY@
logx_sell = @LOGX_SELL@
logx_switch = @LOGX_SWITCH@
empty = "set label 9 'no samples' at graph 0.5, 0.5 center; set xrange [0:1]; set yrange [0:1]; plot 2 notitle; unset label 9; set autoscale"

do for [fmt in 'png svg'] {
	if (fmt eq 'png') {
		set terminal pngcairo size 1100,1200 enhanced font 'sans,10'
	} else {
		set terminal svg size 1100,1200 dynamic enhanced font 'sans,10' background rgb 'white'
	}
	set output out.'.'.fmt
	set multiplot layout 3,1 title title margins 0.08,0.97,0.12,0.94 spacing 0.07
	set label 100 caption at screen 0.01, screen 0.05 left noenhanced font ',9'
	set grid
	set key top right
	set yrange [0:*]

	set title 'BUY latency (market data → BUY order)'
	set xlabel 'latency (µs)'
	if (logx_buy) { set logscale x } else { unset logscale x }
	set ylabel (logx_buy ? 'share of samples per decade' : 'share of samples per µs')
	if (words(rates_buy) > 0) {
		plot for [r in rates_buy] sprintf('data/hist-buy-%s.dat', r) \
			using ($1/1000):(logx_buy ? $5 : $4*1000) with histeps lw 2 title sprintf('%s msg/s', r)
	} else { eval empty }
	unset label 100

	set title 'SELL latency (BUY fill → SELL order)'
	if (logx_sell) { set logscale x } else { unset logscale x }
	set ylabel (logx_sell ? 'share of samples per decade' : 'share of samples per µs')
	if (words(rates_sell) > 0) {
		plot for [r in rates_sell] sprintf('data/hist-sell-%s.dat', r) \
			using ($1/1000):(logx_sell ? $5 : $4*1000) with histeps lw 2 title sprintf('%s msg/s', r)
	} else { eval empty }

	set title 'Switch latency (topology method, venue → algo)'
	set xlabel 'latency (µs)'
	if (logx_switch) { set logscale x } else { unset logscale x }
	set ylabel (logx_switch ? 'share of samples per decade' : 'share of samples per µs')
	if (words(rates_switch) > 0) {
		plot for [r in rates_switch] sprintf('data/hist-switch-%s.dat', r) \
			using ($1/1000):(logx_switch ? $5 : $4*1000) with histeps lw 2 title sprintf('%s msg/s', r)
	} else { eval empty }
	unset multiplot
	set output
}
