// Package report holds what one bench run measured and draws it: the result types (Report,
// Cell, Arm, Sample, Ratio, Idle, Target), the text table (WriteTable), the SVG chart
// (WriteSVG) and the JSON output (WriteJSON; field names and units in the struct tags and their
// comments).
//
// Bench (package main in bench/) measures and fills a Report: it runs the cells, arms and
// rounds, calls Cell.Finish for the summaries and paired ratios, and judges the targets; this
// package decides nothing about them and only prints what the Report holds. Every writer reads
// the Report and never changes it; none keeps a reference to it after returning.
//
// Units: durations are nanoseconds in the JSON (fields ending in _ns); per-byte figures are per
// MiB (2^20 bytes) or per MB (10^6 bytes) as their names say; CPU is user+system time of the
// measuring process. Summaries are medians with a spread ([min-max] under stats.MinQuartileN
// rounds, [p25-p75] from it on).
package report
