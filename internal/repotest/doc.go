// Package repotest holds tests of the repository itself: every package
// has exactly one package doc comment; each binary under cmd/ stays
// within its dependency budget (the packages it must never link) and
// links nothing its allow-list, cmd/<binary>/deps.txt, does not name;
// no import runs from a lower layer to a higher one; and no file outside
// internal/ownerfile (and a listed few, each with its reason) opens or
// renames a file by name beneath a folder itself; and every testdata/npm
// lock is in step with its package.json, as npm ci requires.
package repotest
