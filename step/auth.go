package step

import (
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
)

// loadAuth copies the users, accounts and permissions of the nats-server
// configuration file path into opts: its authorization block (users,
// nkeys, token, no_auth_user) and its accounts. Everything else in the file
// (listeners, JetStream, cluster) is the embedded server's own and ignored.
// A file that names no one is refused: an embedded server given an access
// file and left open would fail open.
func loadAuth(opts *server.Options, path string) error {
	fo, err := server.ProcessConfigFile(path)
	if err != nil {
		return fmt.Errorf("embedded server: access file: %w", err)
	}
	if len(fo.Users) == 0 && len(fo.Nkeys) == 0 && fo.Authorization == "" && fo.Username == "" {
		return fmt.Errorf("embedded server: access file %s: no users in its authorization block", path)
	}
	opts.Users, opts.Nkeys, opts.Accounts = fo.Users, fo.Nkeys, fo.Accounts
	opts.Username, opts.Password, opts.Authorization = fo.Username, fo.Password, fo.Authorization
	opts.NoAuthUser, opts.SystemAccount = fo.NoAuthUser, fo.SystemAccount
	if fo.AuthTimeout > 0 {
		opts.AuthTimeout = fo.AuthTimeout
	}
	return nil
}
