package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// errNoEngine is --data naming a directory that holds no engine: a verb
// that reads or answers does not make one there (it would find nothing,
// and leave an empty data directory behind).
var errNoEngine = errors.New("no engine")

// requireEngine fails with errNoEngine when the data directory the flags
// name holds no engine's data: nothing there, an empty directory, or one
// without the embedded server's storage. It creates nothing.
func (f *connFlags) requireEngine() error {
	store := filepath.Join(f.data, "nats", "jetstream")
	fi, err := os.Stat(store)
	if err == nil && fi.IsDir() {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("open the engine on %s: %w", f.data, err)
	}
	where := "--data " + f.data
	if !f.given("data") {
		where = f.data + " (the default --data)"
	}
	return fmt.Errorf("%w at %s: the directory holds no engine's data, and this verb does not make one; "+
		"talk to a served engine with --nats URL, or give --data the directory of the engine that ran (engine run, engine serve)", errNoEngine, where)
}

// given reports whether the user gave the flag named name.
func (f *connFlags) given(name string) bool {
	if f.fs == nil {
		return false
	}
	set := false
	f.fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}
