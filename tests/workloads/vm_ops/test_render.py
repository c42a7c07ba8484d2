"""A parked vm_change renders for Telegram with its diff visible and everything escaped."""

from __future__ import annotations

import html

from bot.telegram.render import render_approval
from taskqueue import TaskQueue
from workloads.vm_ops.handler import make_handler

from .flow import enqueue, tick
from .stand_ins import CountingLibvirt


async def test_a_parked_change_renders_with_its_diff_escaped(
        queue: TaskQueue, libvirt_host: CountingLibvirt) -> None:
    handler = make_handler(libvirt_host.settings(), driver_factory=libvirt_host)
    task_id = await enqueue(queue, "lab-web", "resize", cpus=2, memory_mb=2048,
                            reason="<script>alert('x')</script> & more")
    await tick(queue, handler)
    approval = (await queue.task_get(task_id)).approval
    assert approval is not None
    text = render_approval(approval, "vm_ops").text
    assert "<b>VM change</b>: <code>lab-web</code>" in text
    assert f"on <code>{html.escape(libvirt_host.uri)}</code>" in text
    assert "Action: Resize lab-web" in text
    assert '<pre><code class="language-diff">' in text
    diff = text.split('<code class="language-diff">')[1].split("</code></pre>")[0]
    assert "- cpus:" in diff and "+ memory (MB):      2048" in diff
    assert "Why: &lt;script&gt;alert(" in text and "&lt;/script&gt; &amp; more" in text
    assert "<script>" not in text
    assert "Revise with `cpus: VALUE` or `memory_mb: VALUE` lines" in html.unescape(text)
    assert libvirt_host.mutations() == []
