package main

// event is one line of `go test -json` (see `go doc cmd/test2json`). Build events (Action
// "build-output", "build-fail") name their package in ImportPath instead of Package.
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
}

// testKey identifies a test across packages.
type testKey struct{ pkg, test string }
