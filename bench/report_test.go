package main

import (
	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/report/reporttest"
)

// fakeReport is reporttest.Report with the Targets section, the worse cells and the verdict the
// bench computes from it.
func fakeReport() *report.Report {
	r := reporttest.Report()
	r.Targets = checkTargets(r)
	r.Worse, r.RatiosChecked = worseCells(r)
	r.Verdict = conclude(r)
	return r
}
