package main

import (
	"context"
	"errors"
	"io"
	"reflect"
	"regexp"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

func TestRunRoundsInterleaves(t *testing.T) {
	var order []string
	arm := func(name string, cpuMs float64) armRunner {
		return armRunner{name, func(_ context.Context, d time.Duration) (report.Sample, error) {
			if d < minSlice {
				t.Errorf("slice %v below minSlice", d)
			}
			order = append(order, name)
			return report.Sample{Ops: 1, Bytes: 1 << 20, Wall: time.Millisecond, CPU: time.Duration(cpuMs * float64(time.Millisecond))}, nil
		}}
	}
	c1 := newCell(&report.Cell{Group: report.GroupDriver, Name: "c1"}, []armRunner{arm("A", 2), arm("B", 1)}, [][2]string{{"B", "A"}})
	c2 := newCell(&report.Cell{Group: report.GroupFloor, Name: "c2"}, []armRunner{arm("F", 1)}, nil)
	if err := runRounds(context.Background(), []*cellRunner{c1, c2}, 3, 0, newProgress(io.Discard)); err != nil {
		t.Fatal(err)
	}
	// Groups one after the other, each with its warm-up, then its rounds.
	want := []string{"A", "B" /* warm-up */, "A", "B", "B", "A", "A", "B", "F" /* warm-up */, "F", "F", "F"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	a := c1.result.Arm("A")
	if len(a.Samples) != 3 || a.Samples[2].Round != 3 || a.CPUPerMiB.Median != 2 {
		t.Errorf("arm A = %+v: want 3 samples, rounds numbered from 1, median 2 ms/MiB", a)
	}
	if q := c1.result.RatioOf("B", "A"); q == nil || q.Median != 0.5 || q.Lower != 3 {
		t.Errorf("ratio B/A = %+v, want 0.5, lower in 3 rounds", q)
	}
}

func TestRunRoundsStopsAtError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	ok := armRunner{"OK", func(context.Context, time.Duration) (report.Sample, error) {
		return report.Sample{Ops: 1, Bytes: 1 << 20, Wall: time.Millisecond, CPU: time.Millisecond}, nil
	}}
	failing := armRunner{"X", func(context.Context, time.Duration) (report.Sample, error) {
		calls++
		if calls == 2 {
			return report.Sample{}, boom
		}
		return report.Sample{Ops: 1, Bytes: 1 << 20, Wall: time.Millisecond, CPU: time.Millisecond}, nil
	}}
	c := newCell(&report.Cell{Group: report.GroupTransport, Name: "c"}, []armRunner{ok, failing}, nil)
	err := runRounds(context.Background(), []*cellRunner{c}, 5, time.Second, newProgress(io.Discard))
	if !errors.Is(err, boom) || calls != 2 {
		t.Fatalf("runRounds = %v after %d calls, want boom after 2", err, calls)
	}
	// The warm-up runs X once (call 1); round 1 fails it (call 2) after OK's first sample.
	if a := c.result.Arm("OK"); len(a.Samples) != 1 || a.CPUPerMiB.N != 1 || a.CPUPerMiB.Median != 1 {
		t.Errorf("arm OK after the error = %+v, want one summarized sample", a)
	}
	if a := c.result.Arm("X"); len(a.Samples) != 0 || a.CPUPerMiB.N != 0 {
		t.Errorf("arm X after the error = %+v, want no sample (the warm-up is not one)", a)
	}
}

// TestRunRoundsProfileLabels checks that every measured sample runs under the profiler labels
// of its cell and arm, which is what splits a -cpuprofile by arm.
func TestRunRoundsProfileLabels(t *testing.T) {
	var got []string
	arm := func(name string) armRunner {
		return armRunner{name, func(ctx context.Context, _ time.Duration) (report.Sample, error) {
			cell, _ := pprof.Label(ctx, "cell")
			a, _ := pprof.Label(ctx, "arm")
			got = append(got, cell+"|"+a)
			return report.Sample{Ops: 1, Bytes: 1, Wall: time.Millisecond, CPU: time.Millisecond}, nil
		}}
	}
	c := newCell(&report.Cell{Group: report.GroupDriver, Name: "c"}, []armRunner{arm("A"), arm("B")}, nil)
	if err := runRounds(context.Background(), []*cellRunner{c}, 2, 0, newProgress(io.Discard)); err != nil {
		t.Fatal(err)
	}
	// The warm-up (unmeasured) carries no labels; the rounds do: A B, then B A.
	want := []string{"|", "|", "driver c|A", "driver c|B", "driver c|B", "driver c|A"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}

func TestMeasureFor(t *testing.T) {
	n := 0
	s, err := measureFor(context.Background(), 0, 4, func() (int64, error) { n++; return 10, nil })
	if err != nil || s.Ops != 4 || s.Bytes != 40 || n != 5 {
		t.Errorf("measureFor(0 s, batch 4) = %+v, %v after %d calls: want one unmeasured call and a measured batch of 4", s, err, n)
	}
	if _, err := measureFor(context.Background(), 0, 1, func() (int64, error) { return 0, nil }); !errors.Is(err, errNoProgress) {
		t.Errorf("measureFor with no bytes = %v, want errNoProgress", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := measureFor(ctx, time.Hour, 1, func() (int64, error) { return 1, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("measureFor with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestFilterCells(t *testing.T) {
	nop := func(context.Context, time.Duration) (report.Sample, error) { return report.Sample{}, nil }
	mk := func(group, name string, arms ...string) *cellRunner {
		var rs []armRunner
		for _, a := range arms {
			rs = append(rs, armRunner{a, nop})
		}
		return newCell(&report.Cell{Group: group, Name: name}, rs, nil)
	}
	cells := func() []*cellRunner {
		return []*cellRunner{
			mk(report.GroupDriver, "varbinary/4096", report.ArmNativeTLS, report.ArmBridgedTLS, report.ArmNativePlain),
			mk(report.GroupDriver, "varbinary/4096, 1 KiB records", report.ArmNativeTLS),
			mk(report.GroupFloor, "loopback TCP read", report.ArmFloorTCP),
		}
	}
	got := filterCells(cells(), regexp.MustCompile(`^driver varbinary/4096`), regexp.MustCompile(`plain`))
	if len(got) != 1 || got[0].result.Name != "varbinary/4096" {
		t.Fatalf("filterCells kept %d cells, want varbinary/4096 alone", len(got))
	}
	if len(got[0].arms) != 1 || got[0].arms[0].name != report.ArmNativePlain || len(got[0].result.Arms) != 1 || got[0].result.Arms[0].Name != report.ArmNativePlain {
		t.Errorf("arms kept: %+v / %+v, want native plain in both", got[0].arms, got[0].result.Arms)
	}
	if all := filterCells(cells(), nil, nil); len(all) != 3 {
		t.Errorf("nil patterns kept %d cells, want 3", len(all))
	}
}

func TestGroupCells(t *testing.T) {
	mk := func(group string) *cellRunner { return &cellRunner{result: &report.Cell{Group: group}} }
	cells := []*cellRunner{mk(report.GroupDriver), mk(report.GroupDriver), mk(report.GroupTransport), mk(report.GroupFloor), mk(report.GroupFloor)}
	var sizes []int
	for _, g := range groupCells(cells) {
		sizes = append(sizes, len(g))
	}
	if !reflect.DeepEqual(sizes, []int{2, 1, 2}) {
		t.Errorf("group sizes %v, want [2 1 2]", sizes)
	}
	if groupCells(nil) != nil {
		t.Errorf("groupCells(nil) is not nil")
	}
}

func TestRunRoundsCellRoundsLimit(t *testing.T) {
	var order []string
	arm := func(name string) armRunner {
		return armRunner{name, func(context.Context, time.Duration) (report.Sample, error) {
			order = append(order, name)
			return report.Sample{Ops: 1, Bytes: 1 << 20, Wall: time.Millisecond, CPU: time.Millisecond}, nil
		}}
	}
	every := newCell(&report.Cell{Group: report.GroupDriver, Name: "every"}, []armRunner{arm("A")}, nil)
	heavy := newCell(&report.Cell{Group: report.GroupDriver, Name: "heavy"}, []armRunner{arm("H1"), arm("H2")}, [][2]string{{"H2", "H1"}})
	heavy.rounds = heavyRounds(3) // 2
	if err := runRounds(context.Background(), []*cellRunner{every, heavy}, 3, 0, newProgress(io.Discard)); err != nil {
		t.Fatal(err)
	}
	want := []string{"A", "H1", "H2" /* warm-up */, "A", "H1", "H2", "A", "H2", "H1", "A"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if n := len(heavy.result.Arm("H1").Samples); n != 2 {
		t.Errorf("heavy cell: %d samples, want 2", n)
	}
	if q := heavy.result.RatioOf("H2", "H1"); q == nil || q.N != 2 {
		t.Errorf("heavy ratio = %+v, want 2 paired rounds", q)
	}
}

// TestRunRoundsGroupBudget: a group whose operations overrun their slices does not squeeze the
// next group, which still gets its share of the budget.
func TestRunRoundsGroupBudget(t *testing.T) {
	var floorSlice time.Duration
	slow := armRunner{"slow", func(_ context.Context, d time.Duration) (report.Sample, error) {
		if d != warmupSlice {
			time.Sleep(300 * time.Millisecond) // far over its 100 ms share
		}
		return report.Sample{Ops: 1, Bytes: 1 << 20, Wall: time.Millisecond, CPU: time.Millisecond}, nil
	}}
	floor := armRunner{"floor", func(_ context.Context, d time.Duration) (report.Sample, error) {
		if d != warmupSlice {
			floorSlice = d
		}
		return report.Sample{Ops: 1, Bytes: 1 << 20, Wall: time.Millisecond, CPU: time.Millisecond}, nil
	}}
	cells := []*cellRunner{
		newCell(&report.Cell{Group: report.GroupDriver, Name: "d"}, []armRunner{slow}, nil),
		newCell(&report.Cell{Group: report.GroupFloor, Name: "f"}, []armRunner{floor}, nil),
	}
	if err := runRounds(context.Background(), cells, 1, 200*time.Millisecond, newProgress(io.Discard)); err != nil {
		t.Fatal(err)
	}
	if floorSlice < 50*time.Millisecond || floorSlice > 100*time.Millisecond {
		t.Errorf("floor slice %v, want about its 100 ms share despite the driver group's overrun", floorSlice)
	}
}
