package media

import "net/netip"

// nonPublic lists the ranges a fetch may not reach without
// AllowPrivateMediaURLs: a client's URL must not make the server talk to
// itself, its cluster or the cloud's metadata service (169.254.169.254,
// fd00:ec2::254). IANA's special-purpose registries, less the ranges that
// are public on purpose (documentation ranges are not routable anyway).
var nonPublic = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",      // "this network", 0.0.0.0 reaches localhost on Linux
		"10.0.0.0/8",     // private
		"100.64.0.0/10",  // carrier-grade NAT, often cluster-internal
		"127.0.0.0/8",    // loopback
		"169.254.0.0/16", // link-local, cloud metadata
		"172.16.0.0/12",  // private
		"192.0.0.0/24",   // IETF protocol assignments
		"192.168.0.0/16", // private
		"198.18.0.0/15",  // benchmarking
		"224.0.0.0/4",    // multicast
		"240.0.0.0/4",    // reserved, broadcast
		"::/128",         // unspecified
		"::1/128",        // loopback
		"64:ff9b:1::/48", // local-use NAT64
		"100::/64",       // discard
		"fc00::/7",       // unique local
		"fe80::/10",      // link-local
		"fec0::/10",      // site-local (deprecated, still routed by some stacks)
		"ff00::/8",       // multicast
		"2001:db8::/32",  // documentation
		"2001::/32",      // Teredo: embeds an IPv4 address we cannot vet
		"::/96",          // IPv4-compatible (deprecated)
		"5f00::/16",      // SRv6 SIDs
		"3fff::/20",      // documentation
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// NAT64 and 6to4 addresses are judged by the IPv4 address they embed;
// IPv4-mapped ones are unmapped first.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// isPublic reports whether a may be dialled without AllowPrivateMediaURLs.
func isPublic(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	// NAT64 and 6to4 addresses carry an IPv4 address a gateway will reach.
	if a.Is6() {
		b := a.As16()
		if nat64.Contains(a) {
			return isPublic(netip.AddrFrom4([4]byte(b[12:16])))
		}
		if sixToFour.Contains(a) {
			return isPublic(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
