# PTP: each host clock's offset from its master (or reference) and the
# error bound tapless-syncd gave it while in sync or in holdover (open
# circles: the last fresh bound, grown), over the time of the journals.
# Reads data/ptp-HOST-CLOCK.dat (seconds since the first journal sample,
# offset ns, bound ns, sync: 1 in, 2 holdover, 0 out).
# A template: tapless report fills in the @KEY@ values.
title = '@TITLE@'
out = '@OUT@'
caption = @CAPTION@
series = '@PTP_SERIES@'
set datafile missing '-'

do for [fmt in 'png svg'] {
	if (fmt eq 'png') {
		set terminal pngcairo size 1100,900 enhanced font 'sans,10'
	} else {
		set terminal svg size 1100,900 dynamic enhanced font 'sans,10' background rgb 'white'
	}
	set output out.'.'.fmt
	set multiplot layout 2,1 title title margins 0.08,0.82,0.14,0.93 spacing 0.1
	set label 100 caption at screen 0.01, screen 0.07 left noenhanced font ',9'
	set grid
	set key outside right
	set xlabel 'time since the first journal sample (s)'

	set title 'Clock offset from its master'
	set ylabel 'offset (ns)'
	plot for [i = 1:words(series)] sprintf('data/ptp-%s.dat', word(series, i)) \
		using 1:2 with linespoints lw 2 pt 7 ps 0.5 lc i title word(series, i)
	unset label 100

	set title 'Error bound while in sync, and in holdover (open circles: grown) (|clock − PTP time| ≤ bound)'
	set ylabel 'bound (ns)'
	set yrange [0:*]
	plot for [i = 1:words(series)] sprintf('data/ptp-%s.dat', word(series, i)) \
		using 1:3 with linespoints lw 2 pt 7 ps 0.5 lc i title word(series, i), \
	     for [i = 1:words(series)] sprintf('data/ptp-%s.dat', word(series, i)) \
		using 1:($4 == 2 ? $3 : NaN) with points pt 6 ps 1.5 lc i notitle
	set autoscale y
	unset multiplot
	set output
}
