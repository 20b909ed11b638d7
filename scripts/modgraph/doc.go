// Package modgraph holds one test, TestUserModuleGraph: the module graph of a program that
// imports only mssqlbridge holds what that program builds with, and none of the container
// tooling that the integration suites use (those are a module of their own, integration/go.mod).
// It builds a throwaway module offline, from the module cache, and runs in `make test`.
package modgraph
