# The distribution of one tapless validate figure (a stamp error, a
# one-way, software minus hardware), one curve per series: the taller and
# thinner, the better. Reads @DATA@: one block per series (gnuplot index
# 0, 1, ...), lines of "bin centre ns, count, share of samples".
# A template: tapless validate fills in the @KEY@ values.
title = '@TITLE@'
out = '@OUT@'
data = '@DATA@'
xlabel = '@XLABEL@'
labels = '@LABELS@'
scale = @SCALE@
unit = '@UNIT@'

do for [fmt in 'png svg'] {
	if (fmt eq 'png') {
		set terminal pngcairo size 900,560 enhanced font 'sans,10'
	} else {
		set terminal svg size 900,560 dynamic enhanced font 'sans,10' background rgb 'white'
	}
	set output out.'.'.fmt
	set title title
	set grid
	set key top right
	set xlabel xlabel.' ('.unit.')'
	set ylabel 'share of samples'
	set yrange [0:*]
	plot for [i=1:words(labels)] data index (i-1) using ($1/scale):3 \
		with histeps lw 2 title word(labels, i)
	unset output
}
