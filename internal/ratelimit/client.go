package ratelimit

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseProxies reads a comma-separated list of trusted proxy addresses or
// CIDR prefixes (TRUSTED_PROXIES).
func ParseProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: %w", f, err)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: %w", f, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// ClientIP returns the address a request's per-address budgets are kept
// under. It is the connection's peer, unless that peer is a trusted proxy:
// then X-Forwarded-For is read from the right, skipping trusted proxies,
// and the first untrusted address is the client (addresses further left
// are whatever the client chose to send). IPv6 addresses count per /64,
// the block one subscriber usually holds, so rotating through one's own
// block does not multiply the budget.
func ClientIP(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap()
	if isTrusted(peer, trusted) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break
			}
			peer = a.Unmap()
			if !isTrusted(peer, trusted) {
				break
			}
		}
	}
	if peer.Is6() {
		p, _ := peer.Prefix(64)
		return p.String()
	}
	return peer.String()
}

// FromTrustedPeer reports whether the request's direct peer is one of the
// trusted proxies: only such a peer's headers about the client (its
// address, its trace) are believed.
func FromTrustedPeer(r *http.Request, trusted []netip.Prefix) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	return err == nil && isTrusted(peer.Unmap(), trusted)
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
