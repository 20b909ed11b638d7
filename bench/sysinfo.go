package main

import (
	"bufio"
	"os"
	"runtime/debug"
	"strings"
)

// mssqlModule is the driver's module path.
const mssqlModule = "github.com/microsoft/go-mssqldb"

// cpuModel returns the first "model name" of /proc/cpuinfo, or "unknown CPU".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// moduleVersion returns the version of the module at path this binary was built with, or
// "(unknown)".
func moduleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return "(unknown)"
}
