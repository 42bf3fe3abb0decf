// Package repotest holds tests of the repository itself: every package
// has exactly one package doc comment, and each binary under cmd/ stays
// within its dependency budget (the packages it must never link).
package repotest
