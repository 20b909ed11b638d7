// Package azureadexample shows the bridged transport under go-mssqldb's azuread connector
// (Entra ID authentication from the DSN's fedauth parameter). It is a module of its own so
// that the Azure SDK, which azuread imports, stays out of the dependencies of
// github.com/tdsbridge/tdsbridge: users who do not use azuread never download it.
package azureadexample
