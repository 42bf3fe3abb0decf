// Package repotest holds tests of the repository itself: every package
// has exactly one package doc comment; each binary under cmd/ stays
// within its dependency budget (the packages it must never link) and
// links nothing its allow-list, cmd/<binary>/deps.txt, does not name;
// and no import runs from a lower layer to a higher one.
package repotest
