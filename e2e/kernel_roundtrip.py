"""Slider step -> picture message, timed without the browser: straight to the kernel (ZMQ),
and through the Jupyter server's websocket, the way JupyterLab talks to it.

Both send the comm message a slider sends when a learner presses an arrow key, and wait
for the kernel's message that carries the new picture; the direct one also prints when each
message of the step arrives (busy, picture, readout, idle; an echo of the slider's value if the
control sends one back). Next to the browser's own timing
(e2e/test_latency.py) this splits a step into: the explorer's update (compute, draw, PNG),
the kernel's message handling, the server and websocket, and the browser.

Run by hand (starts its own kernel; pass a JupyterLab URL and token to go through a server)::

    .venv/bin/python -m e2e.kernel_roundtrip
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
import urllib.parse
import uuid

SETUP = """
from helpers.explorers.saturation import saturation_explorer
live = saturation_explorer(d_k=128, n={n})
print(live.controls["d_k"].model_id, live.image.model_id)
"""
EXPONENTS = [8.0, 7.0]  # d_k 256 <-> 128: the log slider's value is 2**exponent


def comm_update(comm_id: str, value: float) -> dict:
    return {"comm_id": comm_id, "data": {"method": "update", "state": {"value": value}, "buffer_paths": []}}


def message_kind(msg: dict, image_id: str) -> str:
    """busy, idle, echo (ipywidgets 8 echoing the slider's value), picture, readout (any other update)."""
    if msg["msg_type"] == "status":
        return msg["content"]["execution_state"]
    if msg["msg_type"] == "comm_msg":
        method = msg["content"]["data"].get("method")
        if method == "echo_update":
            return "echo"
        return "picture" if msg["content"]["comm_id"] == image_id else "readout"
    return msg["msg_type"]


def direct(n: int = 32, steps: int = 25) -> dict:
    """Through ZMQ to a kernel started here: the kernel's part of a step."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        text = []
        hook = lambda msg: text.append(msg["content"].get("text", "")) if msg["msg_type"] == "stream" else None  # noqa: E731
        client.execute_interactive(SETUP.format(n=n), timeout=60, output_hook=hook)
        slider_id, image_id = "".join(text).split()
        times, refresh, arrivals = [], [], []
        for step in range(steps):
            start = time.perf_counter()
            sent = client.session.send(client.shell_channel.socket, "comm_msg",
                                       content=comm_update(slider_id, 2 ** EXPONENTS[step % 2]))
            arrived = {}  # each message the step brings back, by kind: ms after the send
            while "idle" not in arrived:
                msg = client.get_iopub_msg(timeout=10)
                if msg["parent_header"].get("msg_id") != sent["header"]["msg_id"]:
                    continue
                now = (time.perf_counter() - start) * 1e3
                arrived[message_kind(msg, image_id)] = now
            times.append(arrived["picture"])
            arrivals.append(arrived)
            text.clear()
            client.execute_interactive("print(live.last_update_ms)", timeout=30, output_hook=hook)
            refresh.append(float("".join(text)))
        found = {"explorer update in the kernel": statistics.median(refresh),
                 "kernel round trip over ZMQ": statistics.median(times)}
        for kind in arrivals[-1]:  # the messages of one step, in the order they came
            found[f"  {kind} arrives"] = statistics.median(a[kind] for a in arrivals if kind in a)
        return found
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def via_server(base_url: str, token: str, n: int = 32, steps: int = 25) -> dict:
    """Through the Jupyter server's kernel websocket (a new kernel, shut down afterwards)."""
    return asyncio.run(_via_server(base_url, token, n, steps))


async def _via_server(base_url: str, token: str, n: int, steps: int) -> dict:
    from jupyter_server.services.kernels.connection.base import deserialize_binary_message
    from tornado.httpclient import AsyncHTTPClient, HTTPRequest
    from tornado.websocket import websocket_connect

    http = AsyncHTTPClient()
    auth = {"Authorization": f"token {token}"}
    response = await http.fetch(HTTPRequest(f"{base_url}/api/kernels", method="POST", headers=auth,
                                            body=json.dumps({"name": "python3"})))
    kernel_id = json.loads(response.body)["id"]
    session = uuid.uuid4().hex
    ws_url = base_url.replace("http", "ws", 1) + f"/api/kernels/{kernel_id}/channels?" + urllib.parse.urlencode(
        {"session_id": session, "token": token})
    ws = await websocket_connect(HTTPRequest(ws_url, headers=auth))

    def send(msg_type: str, content: dict) -> str:
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "msg_type": msg_type, "session": session, "username": "e2e",
                  "version": "5.3", "date": ""}
        ws.write_message(json.dumps({"header": header, "parent_header": {}, "metadata": {},
                                     "content": content, "channel": "shell", "buffers": []}))
        return msg_id

    async def receive() -> dict:
        frame = await asyncio.wait_for(ws.read_message(), timeout=30)
        return deserialize_binary_message(frame) if isinstance(frame, bytes) else json.loads(frame)

    async def run(code: str) -> str:
        msg_id = send("execute_request", {"code": code, "silent": False, "store_history": False,
                                          "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
        text, replied, idle = "", False, False
        while not (replied and idle):  # the reply (shell) and the output (iopub) race
            msg = await receive()
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                text += msg["content"]["text"]
            elif msg["msg_type"] == "execute_reply":
                assert msg["content"]["status"] == "ok", msg["content"]
                replied = True
            elif msg["msg_type"] == "status":
                idle = msg["content"]["execution_state"] == "idle"
        return text

    try:
        slider_id, image_id = (await run(SETUP.format(n=n))).split()
        times = []
        for step in range(steps):
            start = time.perf_counter()
            send("comm_msg", comm_update(slider_id, 2 ** EXPONENTS[step % 2]))
            while True:
                msg = await receive()
                if msg["msg_type"] == "comm_msg" and msg["content"]["comm_id"] == image_id and msg.get("buffers"):
                    times.append((time.perf_counter() - start) * 1e3)
                    break
            await asyncio.sleep(0.05)
        return {"round trip through the Jupyter server": statistics.median(times)}
    finally:
        ws.close()
        await http.fetch(HTTPRequest(f"{base_url}/api/kernels/{kernel_id}", method="DELETE", headers=auth))


if __name__ == "__main__":
    import sys

    results = direct()
    if len(sys.argv) == 3:
        results |= via_server(sys.argv[1], sys.argv[2])
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    for name, ms in results.items():
        print(f"{name}: {ms:.1f} ms (median)")
