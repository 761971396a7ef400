package process

import (
	"fmt"
	"net"
	"strings"
)

// The peer listener: where the round leader takes the rounds that the other instances on
// its database forward to it while their rounds contend (adapters/postgres/forward.go,
// docs/operations.md).

func (b *binder) peers(c *Config) {
	b.string(&c.PeerAddr, "peer-addr", "RETSU_PEER_ADDR", "",
		"address to take other instances' forwarded rounds at, such as 10.0.0.5:2425 (empty: no round forwarding)")
	b.string(&c.PeerAdvertise, "peer-advertise", "RETSU_PEER_ADVERTISE", "",
		"host:port at which the other instances reach --peer-addr (default: --peer-addr)")
	bindSecret(b, &c.PeerToken, "peer-token", "RETSU_PEER_TOKEN",
		fmt.Sprintf("secret that every instance of the deployment shares, at least %d characters, required with --peer-addr", minTokenLength), parsePeerToken)
}

// maxPeerTokenLength bounds the peer token, which goes in the opening line of each peer
// connection.
const maxPeerTokenLength = 256

func parsePeerToken(s string) (string, error) {
	if len(s) < minTokenLength || len(s) > maxPeerTokenLength || strings.ContainsAny(s, " \t\r\n,") {
		return "", fmt.Errorf("must be %d to %d characters without spaces or commas", minTokenLength, maxPeerTokenLength)
	}
	return s, nil
}

// peerAdvertise is the address the other instances reach this one's peer listener at.
func (c Config) peerAdvertise() string {
	if c.PeerAdvertise != "" {
		return c.PeerAdvertise
	}
	return c.PeerAddr
}

// checkPeers refuses peer settings that cannot work: forwarding without its secret, without
// an address that other instances can reach, or without PostgreSQL.
func checkPeers(c Config) error {
	if c.PeerAddr == "" {
		if c.PeerAdvertise != "" || c.PeerToken != "" {
			return &ConfigError{"RETSU_PEER_ADDR (--peer-addr)", "is required with RETSU_PEER_ADVERTISE or RETSU_PEER_TOKEN"}
		}
		return nil
	}
	if c.Store != StorePostgres {
		return &ConfigError{"RETSU_PEER_ADDR (--peer-addr)", "forwards rounds between instances on one PostgreSQL: it needs the postgres store"}
	}
	if c.PeerToken == "" {
		return &ConfigError{"RETSU_PEER_TOKEN (--peer-token)", "is required with RETSU_PEER_ADDR"}
	}
	if _, port, err := net.SplitHostPort(c.PeerAddr); err != nil || port == "" || port == "0" {
		return &ConfigError{"RETSU_PEER_ADDR (--peer-addr)", "must be host:port or :port, with a port the other instances can be told"}
	}
	host, port, err := net.SplitHostPort(c.peerAdvertise())
	if ip := net.ParseIP(host); err != nil || host == "" || port == "" || port == "0" || (ip != nil && ip.IsUnspecified()) {
		return &ConfigError{"RETSU_PEER_ADVERTISE (--peer-advertise)",
			"must be the host:port at which the other instances reach this one (set it when RETSU_PEER_ADDR has no host)"}
	}
	return nil
}

// startPeers listens on cfg.PeerAddr and serves the peers there until the stores close.
// Only other instances should reach it: it asks for the peer token, not for the API's.
func (s *Server) startPeers() (<-chan error, error) {
	if s.stores.servePeers == nil {
		return nil, nil
	}
	listener, err := net.Listen("tcp", s.cfg.PeerAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s for the peers: %w", s.cfg.PeerAddr, err)
	}
	failed := make(chan error, 1)
	go func() {
		if err := s.stores.servePeers(listener); err != nil {
			failed <- err
		}
	}()
	s.log.Info("serving the peers", "addr", listener.Addr().String(), "advertised", s.cfg.peerAdvertise())
	return failed, nil
}
