package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// validate checks what the helper relies on: a known mode and network,
// absolute clean paths, a proxy socket for NetProxy.
func (p Policy) validate() error {
	switch p.Mode {
	case ReadOnly, WorkspaceWrite:
	default:
		return invalid(fmt.Sprintf("unknown sandbox mode %q", p.Mode))
	}
	switch p.network() {
	case NetOff, NetHost:
	case NetProxy:
		if p.ProxySocket == "" || !filepath.IsAbs(p.ProxySocket) {
			return invalid("network proxy needs the proxy's socket as an absolute path")
		}
	default:
		return invalid(fmt.Sprintf("unknown sandbox network %q", p.Network))
	}
	if !filepath.IsAbs(p.Location) {
		return invalid(fmt.Sprintf("location %q is not an absolute path", p.Location))
	}
	for _, list := range [][]string{p.Writable, p.ReadOnly, p.Denied} {
		for _, q := range list {
			if !filepath.IsAbs(q) || strings.ContainsRune(q, 0) {
				return invalid(fmt.Sprintf("path %q is not an absolute path", q))
			}
		}
	}
	return nil
}

func (p Policy) network() Network {
	if p.Network == "" {
		return NetOff
	}
	return p.Network
}

// resolved is p with its paths resolved through symlinks on the host (the
// helper binds them from the host's root, where an absolute link would
// point elsewhere); a path that does not exist stays as it is.
func (p Policy) resolved() Policy {
	real := func(q string) string {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return r
		}
		return filepath.Clean(q)
	}
	each := func(list []string) []string {
		out := make([]string, len(list))
		for i, q := range list {
			out[i] = real(q)
		}
		return out
	}
	p.Location = real(p.Location)
	p.Writable, p.ReadOnly, p.Denied = each(p.Writable), each(p.ReadOnly), each(p.Denied)
	if p.ProxySocket != "" {
		p.ProxySocket = real(p.ProxySocket)
	}
	return p
}
