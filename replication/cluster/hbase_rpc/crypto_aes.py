"""HBase's AES encryption of the RPC (``hbase.rpc.crypto.encryption.aes.enabled``), both sides.

After a SASL exchange that agreed on privacy (``auth-conf``), a client that names a cipher in its ConnectionHeader
(``rpc_crypto_cipher_transformation = "AES/CTR/NoPadding"``) gets back, still GSS-wrapped, a
``ConnectionHeaderResponse`` with the keys and IVs the server made (``ServerRpcConnection.setupCryptoCipher``:
``hbase.rpc.crypto.encryption.aes.cipher.keySizeBits``, 128 by default, as key and IV length; the client's in
and out are the server's out and in). From then on both sides wrap every packet with AES instead of GSSAPI
(``CryptoAES``, hbase-common), which is cheaper than the Kerberos wrap:

- wrap: ``AES-CTR(msg + mac) + seq``, where ``mac`` is the first 10 bytes of HMAC-MD5 over ``seq + msg`` keyed with
  the sender's key, ``seq`` the sender's message count as 4 big-endian bytes (from 0); the CTR keystream runs on
  across packets (one cipher per direction, initialised once with the key and IV);
- unwrap: the reverse, refusing a packet whose MAC does not match or whose sequence number is not the next one.

The packets are framed as GSS-wrapped ones (``sasl.wrapped_packet``: a 4-byte length, then the bytes).
hbrep's HBase RPC listener is the server side: :func:`server_cipher_metas` makes the keys as HBase's server does.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import struct

from replication.cluster.hbase_rpc.sasl import SaslFrameError
from replication.proto import RPC_pb2

TRANSFORMATION = "AES/CTR/NoPadding"  # the one transformation HBase's CryptoAES accepts
MAC_LENGTH = 10
KEY_BYTES = 16  # hbase.rpc.crypto.encryption.aes.cipher.keySizeBits' default, 128, for keys and IVs alike
_SEQ = struct.Struct(">i")


class CryptoAes:
    """One connection's AES wrap and unwrap, from the server's ``CryptoCipherMeta`` (see the module docstring)."""

    def __init__(self, meta: RPC_pb2.CryptoCipherMeta):
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        if meta.transformation.upper() != TRANSFORMATION.upper():  # equalsIgnoreCase, as CryptoAES
            raise SaslFrameError(f"the server chose the cipher {meta.transformation!r}; HBase's CryptoAES is AES/CTR")
        self._encryptor = Cipher(algorithms.AES(meta.outKey), modes.CTR(meta.outIv)).encryptor()
        self._decryptor = Cipher(algorithms.AES(meta.inKey), modes.CTR(meta.inIv)).decryptor()
        self._my_key, self._peer_key = meta.outKey, meta.inKey
        self._my_seq = self._peer_seq = 0

    @staticmethod
    def _mac(key: bytes, seq: bytes, message: bytes) -> bytes:
        return hmac.new(key, seq + message, hashlib.md5).digest()[:MAC_LENGTH]

    def wrap(self, message: bytes) -> bytes:
        """``message`` encrypted with its MAC, then its sequence number (CryptoAES.wrap)."""
        seq = _SEQ.pack(self._my_seq)
        mac = self._mac(self._my_key, seq, message)
        self._my_seq += 1
        return self._encryptor.update(message + mac) + seq

    def unwrap(self, packet: bytes) -> bytes:
        """The message of a packet the server wrapped; SaslFrameError when it was altered or is out of order."""
        if len(packet) < MAC_LENGTH + _SEQ.size:
            raise SaslFrameError(f"an AES-wrapped packet of {len(packet)} bytes is too short")
        plain, seq = self._decryptor.update(packet[: -_SEQ.size]), packet[-_SEQ.size :]
        message, mac = plain[:-MAC_LENGTH], plain[-MAC_LENGTH:]
        if not hmac.compare_digest(mac, self._mac(self._peer_key, seq, message)):
            raise SaslFrameError("an AES-wrapped packet from the other side does not match its MAC")
        (number,) = _SEQ.unpack(seq)
        if number != self._peer_seq:
            raise SaslFrameError(f"AES-wrapped packets out of order: got {number}, expected {self._peer_seq}")
        self._peer_seq += 1
        return message

    def dispose(self) -> None:
        """Nothing to release (the GSSAPI context was released when AES took over)."""


def server_cipher_metas() -> tuple[RPC_pb2.CryptoCipherMeta, RPC_pb2.CryptoCipherMeta]:
    """New random keys and IVs as a server makes them (``ServerRpcConnection.setupCryptoCipher``): the server's own
    meta (for its :class:`CryptoAes`) and the one it sends the client, with in and out swapped."""
    in_key, out_key, in_iv, out_iv = (os.urandom(KEY_BYTES) for _ in range(4))
    own = RPC_pb2.CryptoCipherMeta(
        transformation=TRANSFORMATION, inKey=in_key, outKey=out_key, inIv=in_iv, outIv=out_iv
    )
    client = RPC_pb2.CryptoCipherMeta(
        transformation=TRANSFORMATION, inKey=out_key, outKey=in_key, inIv=out_iv, outIv=in_iv
    )
    return own, client
