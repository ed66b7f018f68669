// Package doccheck holds the tests that keep the documentation whole: the
// README stays a landing page, every page is reachable from it, no page
// grows past a reader's patience, and no relative link or anchor is dead.
// It has no code of its own.
package doccheck
