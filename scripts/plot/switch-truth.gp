# Switch latency per frame: measured by tapless from the hosts' stamps
# (solid, topology method) against the truth for the same frames (dashed:
# the switch emulator's own egress - ingress stamps, less serialisation
# for a store-and-forward switch), one colour per rate, and the model's
# latency as a vertical line. Left: CDFs, the y axis stretched towards 1;
# right: the distributions (share per decade on a log axis, per µs on a
# linear one). Log latency axis where p1..p99 span decades.
# Reads data/cdf-, data/hist-switch-RATE.dat and -truth-RATE.dat.
# A template: tapless report fills in the @KEY@ values.
title = '@TITLE@'
set datafile missing '-'
out = '@OUT@'
caption = @CAPTION@
rates_truth = '@RATES_TRUTH@'
logx = @LOGY_SW@
model = @MODEL_NS@
xmin = @SW_XMIN@
# CDF value y is drawn at -log10(1 - y): 0.9 at 1, 0.99 at 2, 0.999 at 3.
tail(y) = y >= 0.99999 ? 5 : -log10(1 - y)
# Nothing at or below 0 on a log axis.
pos(v) = (logx && v <= 0) ? NaN : v

do for [fmt in 'png svg'] {
	if (fmt eq 'png') {
		set terminal pngcairo size 1400,680 enhanced font 'sans,10'
	} else {
		set terminal svg size 1400,680 dynamic enhanced font 'sans,10' background rgb 'white'
	}
	set output out.'.'.fmt
	set multiplot layout 1,2 title title margins 0.06,0.98,0.24,0.9 spacing 0.07
	set label 100 caption at screen 0.01, screen 0.14 left noenhanced font ',9'
	set grid
	set xlabel 'switch latency (µs)'
	if (logx) { set logscale x; set xrange [xmin / 1e3:*] } else { unset logscale x; set xrange [*:*] }
	if (model == model) {
		set arrow 1 from first model / 1e3, graph 0 to first model / 1e3, graph 1 nohead dt 4 lw 2 lc rgb 'red'
		set label 2 sprintf('model %g ns', model) at first model / 1e3, graph 0.03 left offset 0.5, 0 tc rgb 'red' font ',9'
	}

	set title 'Per frame, cumulative: measured (solid) and truth (dashed)'
	set ylabel 'cumulative fraction of frames'
	set key top left
	set yrange [0:5]
	set ytics ('0' 0, '0.5' tail(0.5), '0.9' 1, '0.99' 2, '0.999' 3, '0.9999' 4, '1' 5)
	plot for [i = 1:words(rates_truth)] sprintf('data/cdf-switch-%s.dat', word(rates_truth, i)) \
		using (pos($1) / 1e3):(tail($2)) with steps lw 2 lc i title sprintf('%s msg/s measured', word(rates_truth, i)), \
	     for [i = 1:words(rates_truth)] sprintf('data/cdf-truth-%s.dat', word(rates_truth, i)) \
		using (pos($1) / 1e3):(tail($2)) with steps lw 2 dt 2 lc i title sprintf('%s msg/s truth', word(rates_truth, i))
	unset label 100

	set title 'Per frame: measured (solid) and truth (dashed)'
	set ylabel (logx ? 'share of frames per decade' : 'share of frames per µs')
	set key top right
	set yrange [0:*]
	set ytics autofreq
	plot for [i = 1:words(rates_truth)] sprintf('data/hist-switch-%s.dat', word(rates_truth, i)) \
		using (pos($1) / 1e3):(logx ? $5 : $4 * 1e3) with histeps lw 2 lc i title sprintf('%s msg/s measured', word(rates_truth, i)), \
	     for [i = 1:words(rates_truth)] sprintf('data/hist-truth-%s.dat', word(rates_truth, i)) \
		using (pos($1) / 1e3):(logx ? $5 : $4 * 1e3) with histeps lw 2 dt 2 lc i title sprintf('%s msg/s truth', word(rates_truth, i))
	unset arrow 1
	unset label 2
	set autoscale y
	unset multiplot
	set output
}
