# Latency against market data rate, mean ± SD: BUY and SELL (µs), and
# switch latency by both methods (ns). Reads data/rates.dat.
# A template: tapless report fills in the @KEY@ values.
title = '@TITLE@'
out = '@OUT@'
rates_bs = '@RATES_BUY@ @RATES_SELL@'
logx = @LOGX_RATE@
set datafile missing '-'
set xrange [@RATE_MIN@:@RATE_MAX@]
empty = "set label 9 'no samples' at graph 0.5, 0.5 center; set yrange [0:1]; plot 2 notitle; unset label 9; set autoscale y"

do for [fmt in 'png svg'] {
	if (fmt eq 'png') {
		set terminal pngcairo size 1200,600 enhanced font 'sans,10'
	} else {
		set terminal svg size 1200,600 dynamic enhanced font 'sans,10' background rgb 'white'
	}
	set output out.'.'.fmt
	set multiplot layout 1,2 title title
	if (logx) { set logscale x } else { unset logscale x }
	set grid
	set key below
	set xlabel 'market data rate (messages/s)'
	set ylabel 'latency (µs)'
	set title 'BUY and SELL latency (mean ± SD)'
	if (words(rates_bs) > 0) {
		plot 'data/rates.dat' using 1:2:3 with yerrorlines lw 2 pt 7 title 'BUY (tick to trade)', \
		     '' using 1:4:5 with yerrorlines lw 2 pt 5 title 'SELL (fill to sell)'
	} else { eval empty }
	set ylabel 'switch latency (ns)'
	set title 'Switch latency (mean ± SD)'
	plot 'data/rates.dat' using 1:6:7 with yerrorlines lw 2 pt 7 title 'topology method', \
	     '' using 1:8:9 with yerrorlines lw 2 pt 5 title 'baseline method (switch − back to back)'
	unset multiplot
	set output
}
