package process_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/app/process"
)

const peerToken = "peer-token-0123456789"

func TestParseServeConfig_Peers_OffByDefault(t *testing.T) {
	t.Parallel()
	is := is.New(t)

	c, err := process.ParseServeConfig(nil, env(withDatabase), io.Discard)

	is.NoErr(err)
	is.Equal(c.PeerAddr, "")  // no round forwarding unless asked for
	is.Equal(c.PeerToken, "") // and no token
}

func TestParseServeConfig_Peers_AddressAdvertiseAndToken(t *testing.T) {
	t.Parallel()
	is := is.New(t)

	c, err := process.ParseServeConfig([]string{"--peer-addr", ":2425", "--peer-advertise", "10.0.0.5:2425"},
		env(merge(withDatabase, "RETSU_PEER_TOKEN", peerToken)), io.Discard)

	is.NoErr(err)
	is.Equal(c.PeerAddr, ":2425")
	is.Equal(c.PeerAdvertise, "10.0.0.5:2425")
	is.Equal(c.PeerToken, peerToken)
}

func TestParseServeConfig_Peers_SettingsThatCannotWork_NameTheirVariable(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		args    []string
		env     map[string]string
		setting string
	}{
		"no token": {[]string{"--peer-addr", "10.0.0.5:2425"}, withDatabase, "RETSU_PEER_TOKEN (--peer-token)"},
		"a short token": {[]string{"--peer-addr", "10.0.0.5:2425"}, merge(withDatabase, "RETSU_PEER_TOKEN", "short"),
			"RETSU_PEER_TOKEN"},
		"a token without an address": {nil, merge(withDatabase, "RETSU_PEER_TOKEN", peerToken), "RETSU_PEER_ADDR (--peer-addr)"},
		"no host to advertise": {[]string{"--peer-addr", ":2425"}, merge(withDatabase, "RETSU_PEER_TOKEN", peerToken),
			"RETSU_PEER_ADVERTISE (--peer-advertise)"},
		"an unspecified host to advertise": {[]string{"--peer-addr", "0.0.0.0:2425"}, merge(withDatabase, "RETSU_PEER_TOKEN", peerToken),
			"RETSU_PEER_ADVERTISE (--peer-advertise)"},
		"no port": {[]string{"--peer-addr", "10.0.0.5"}, merge(withDatabase, "RETSU_PEER_TOKEN", peerToken),
			"RETSU_PEER_ADDR (--peer-addr)"},
		"port 0": {[]string{"--peer-addr", ":0", "--peer-advertise", "10.0.0.5:2425"}, merge(withDatabase, "RETSU_PEER_TOKEN", peerToken),
			"RETSU_PEER_ADDR (--peer-addr)"},
		"a token too long for the handshake": {[]string{"--peer-addr", "10.0.0.5:2425"},
			merge(withDatabase, "RETSU_PEER_TOKEN", strings.Repeat("t", 257)), "RETSU_PEER_TOKEN"},
		"the memory store": {[]string{"--store", "memory", "--peer-addr", "10.0.0.5:2425"}, map[string]string{"RETSU_PEER_TOKEN": peerToken},
			"RETSU_PEER_ADDR (--peer-addr)"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			_, err := process.ParseServeConfig(tc.args, env(tc.env), io.Discard)

			var configErr *process.ConfigError
			is.True(errors.As(err, &configErr))                // refused
			is.Equal(configErr.Setting, tc.setting)            // naming the setting
			is.True(!strings.Contains(err.Error(), peerToken)) // without the token
		})
	}
}
