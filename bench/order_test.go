package main

import (
	"reflect"
	"testing"
)

func TestArmOrderRows(t *testing.T) {
	tests := []struct {
		n    int
		want [][]int // rows 0, 1, ...
	}{
		{1, [][]int{{0}, {0}}},
		{2, [][]int{{0, 1}, {1, 0}, {0, 1}}},
		{3, [][]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}, {0, 2, 1}, {1, 0, 2}, {0, 1, 2}}},
		{4, [][]int{{0, 1, 3, 2}, {1, 2, 0, 3}, {2, 3, 1, 0}, {3, 0, 2, 1}, {0, 1, 3, 2}}},
	}
	for _, tt := range tests {
		for r, want := range tt.want {
			if got := armOrder(tt.n, r); !reflect.DeepEqual(got, want) {
				t.Errorf("armOrder(%d, %d) = %v, want %v", tt.n, r, got, want)
			}
		}
	}
	if got := armOrder(0, 3); got != nil {
		t.Errorf("armOrder(0, 3) = %v, want nil", got)
	}
}

// TestArmOrderBalanced checks the design's two properties over one period, for every n up to
// 9: each row visits every arm once, every arm holds every position equally often, and every
// ordered pair of arms is adjacent (one right after the other) equally often.
func TestArmOrderBalanced(t *testing.T) {
	for n := 2; n <= 9; n++ {
		period, times := n, 1
		if n%2 == 1 {
			period, times = 2*n, 2
		}
		pos := make([][]int, n)  // pos[arm][position]
		next := make([][]int, n) // next[a][b]: b right after a
		for a := range pos {
			pos[a], next[a] = make([]int, n), make([]int, n)
		}
		for r := 0; r < period; r++ {
			row := armOrder(n, r)
			seen := make([]bool, n)
			for j, a := range row {
				if a < 0 || a >= n || seen[a] {
					t.Fatalf("n=%d row %d = %v: not a permutation", n, r, row)
				}
				seen[a] = true
				pos[a][j]++
				if j > 0 {
					next[row[j-1]][a]++
				}
			}
		}
		for a := 0; a < n; a++ {
			for j := 0; j < n; j++ {
				if pos[a][j] != times {
					t.Errorf("n=%d: arm %d in position %d %d times, want %d", n, a, j, pos[a][j], times)
				}
				if j != a && next[a][j] != times {
					t.Errorf("n=%d: arm %d right after arm %d %d times, want %d", n, j, a, next[a][j], times)
				}
			}
		}
	}
}
