// Package capacity holds the limits that the HTTP listeners of one process share: the
// requests served at once, the long polls waiting at once, the bytes of request bodies in
// flight and the open connections. The native API and the SQS-compatible endpoint take
// from the same limits, so that neither listener adds capacity to the other: a client
// cannot get past the API's caps by sending the same load to the SQS port.
package capacity
