# Live: per-interval p50 and p99 over time, from the stream tapless
# correlate --follow wrote during the runs (follow.jsonl): tick to trade
# at each host (top) and each hop's one-way latency (bottom), against the
# seconds since the first interval's start, on a log axis in µs. Intervals
# whose lines carry flags (a host stalled, a capd restart, data late) are
# shaded; a dotted line marks where each rate's run began. Reads
# data/follow-N.dat (seconds, p50 ns, p99 ns, count, flagged, flags; a
# blank line where an interval had no samples) and data/follow-flags.dat
# (seconds, interval length, flags).
# A template: tapless report fills in the @KEY@ values.
title = '@TITLE@'
out = '@OUT@'
caption = @CAPTION@
txn = '@FOLLOW_TXN@'
txn_names = '@FOLLOW_TXN_NAMES@'
hops = '@FOLLOW_HOPS@'
hop_names = '@FOLLOW_HOP_NAMES@'
flagged = @FOLLOW_FLAGGED@
flags = '@FOLLOW_FLAGS@'
rate_x = '@FOLLOW_RATE_X@'
rate_labels = '@FOLLOW_RATE_LABELS@'
set datafile missing '-'
empty = "set label 9 'no samples' at graph 0.5, 0.5 center; unset logscale y; set xrange [0:1]; set yrange [0:1]; plot 2 notitle; unset label 9; set autoscale"
# The shading, drawn first (under the lines) on a second axis of 0..1.
# The flags seen (flags) are in the caption.
shade = flagged ? "'data/follow-flags.dat' using ($1 + $2 / 2):(1):2 axes x1y2 with boxes fs solid 0.3 noborder lc rgb '#f5b041' title 'flagged interval', " : ""

do for [fmt in 'png svg'] {
	if (fmt eq 'png') {
		set terminal pngcairo size 1100,900 enhanced font 'sans,10'
	} else {
		set terminal svg size 1100,900 dynamic enhanced font 'sans,10' background rgb 'white'
	}
	set output out.'.'.fmt
	set multiplot layout 2,1 title title margins 0.08,0.80,0.17,0.93 spacing 0.1
	set label 100 caption at screen 0.01, screen 0.095 left noenhanced font ',9'
	set grid
	set key outside right
	set xlabel 'seconds since the first interval'
	set ylabel 'latency (µs)'
	set format y '%g'
	set y2range [0:1]
	unset y2tics
	set xrange [0:*]
	unset arrow
	do for [i = 1:words(rate_x)] {
		x = word(rate_x, i) + 0
		set arrow i from first x, graph 0 to first x, graph 1 nohead front dt 3 lw 2 lc rgb 'gray20'
		set label 10 + i word(rate_labels, i).' msg/s' at first x, graph 1.03 left font ',8' tc rgb 'gray30'
	}

	set title 'Tick to trade per interval'
	if (words(txn) > 0) {
		set logscale y
		plot @shade \
		     for [i = 1:words(txn)] sprintf('data/follow-%s.dat', word(txn, i)) \
			using 1:($2/1000) with linespoints lw 2 pt 7 ps 0.4 lc i title sprintf('p50 at %s', word(txn_names, i)), \
		     for [i = 1:words(txn)] sprintf('data/follow-%s.dat', word(txn, i)) \
			using 1:($3/1000) with linespoints dt 2 lw 1.5 pt 6 ps 0.4 lc i title sprintf('p99 at %s', word(txn_names, i))
	} else { eval empty }
	unset label 100

	set title 'One-way latency of each hop per interval'
	if (words(hops) > 0) {
		set logscale y
		plot @shade \
		     for [i = 1:words(hops)] sprintf('data/follow-%s.dat', word(hops, i)) \
			using 1:($2/1000) with linespoints lw 2 pt 7 ps 0.4 lc i + 2 title sprintf('p50 %s', word(hop_names, i)), \
		     for [i = 1:words(hops)] sprintf('data/follow-%s.dat', word(hops, i)) \
			using 1:($3/1000) with linespoints dt 2 lw 1.5 pt 6 ps 0.4 lc i + 2 title sprintf('p99 %s', word(hop_names, i))
	} else { eval empty }
	unset multiplot
	set output
}
