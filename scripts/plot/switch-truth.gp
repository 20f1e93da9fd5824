# Switch latency measured by tapless from host stamps against the switch
# emulator's own ingress/egress stamps (the truth): per rate, mean ± SD by
# each method beside its truth; then per packet, the measured distribution
# (solid) over the truth's (dashed), one colour per rate.
# Reads data/rates.dat, data/hist-switch-RATE.dat, data/hist-truth-RATE.dat.
# A template: tapless report fills in the @KEY@ values.
title = '@TITLE@'
out = '@OUT@'
rates_truth = '@RATES_TRUTH@'
logx = @LOGX_RATE@
logx_switch = @LOGX_SWITCH@
set datafile missing '-'
# Side by side, not on top of each other: each series nudged along x.
nudge(x, k) = logx ? x * 1.04**k : x + k * (@RATE_MAX@ - @RATE_MIN@) / 150

do for [fmt in 'png svg'] {
	if (fmt eq 'png') {
		set terminal pngcairo size 1200,600 enhanced font 'sans,10'
	} else {
		set terminal svg size 1200,600 dynamic enhanced font 'sans,10' background rgb 'white'
	}
	set output out.'.'.fmt
	set multiplot layout 1,2 title title
	set grid
	set key below

	set title 'Mean ± SD: measured against the truth'
	set xlabel 'market data rate (messages/s)'
	set ylabel 'switch latency (ns)'
	set xrange [@RATE_MIN@:@RATE_MAX@]
	if (logx) { set logscale x } else { unset logscale x }
	plot 'data/rates.dat' using (nudge($1, -1.5)):6:7 with yerrorlines lw 2 pt 7 lc 1 title 'topology method', \
	     '' using (nudge($1, -0.5)):10:11 with yerrorlines lw 1 dt 2 pt 6 lc 1 title 'its truth', \
	     '' using (nudge($1, 0.5)):8:9 with yerrorlines lw 2 pt 5 lc 2 title 'baseline method', \
	     '' using (nudge($1, 1.5)):12:13 with yerrorlines lw 1 dt 2 pt 4 lc 2 title 'its truth (residence)'

	set title 'Per packet: measured (solid, topology method) and truth (dashed)'
	set xlabel 'switch latency (ns)'
	set ylabel 'share of packets per ns'
	set autoscale x
	set yrange [0:*]
	if (logx_switch) { set logscale x } else { unset logscale x }
	set key inside top right
	plot for [i = 1:words(rates_truth)] sprintf('data/hist-switch-%s.dat', word(rates_truth, i)) \
		using 1:4 with histeps lw 2 lc i title sprintf('%s msg/s measured', word(rates_truth, i)), \
	     for [i = 1:words(rates_truth)] sprintf('data/hist-truth-%s.dat', word(rates_truth, i)) \
		using 1:4 with histeps lw 2 dt 2 lc i title sprintf('%s msg/s truth', word(rates_truth, i))
	set autoscale y
	unset multiplot
	set output
}
