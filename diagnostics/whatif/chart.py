"""The sweep as a plotly chart and as files: CSV, JSON, HTML and (where a Chrome is
available to kaleido) PNG."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.whatif.sweep import SweepResult

#: Where kaleido may find a browser when none is configured.
CHROMIUM = Path("/usr/bin/chromium")


def _label(row: dict[str, Any]) -> str:
    late = "unlimited" if row["late_arrival_s"] is None else f"{row['late_arrival_s']:g}s"
    text = f"late {late}, ooo {row['out_of_order_s']:g}s"
    if row["partition_by"]:
        text += ", PARTITION BY"
    if row["over"]:
        text += f", OVER {row['over']}"
    return text


def chart(result: SweepResult) -> Any:
    """Affected share against p95 release delay; Pareto front joined, recommendation starred."""
    import plotly.graph_objects as go

    rows = result.table.with_columns(
        (pl.col("pct_adjusted") + pl.col("pct_dropped")).alias("affected")
    ).to_dicts()
    fig = go.Figure()
    groups = (
        ("other settings", [r for r in rows if not r["pareto"]], "circle", 8),
        (
            "Pareto front",
            sorted((r for r in rows if r["pareto"]), key=lambda r: r["delay_p95_s"] or 0),
            "diamond",
            11,
        ),
        ("recommended", [r for r in rows if r["recommended"]], "star", 20),
    )
    for name, chosen, symbol, size in groups:
        fig.add_trace(
            go.Scatter(
                x=[r["delay_p95_s"] for r in chosen],
                y=[r["affected"] for r in chosen],
                mode="lines+markers" if name == "Pareto front" else "markers",
                name=name,
                marker={"symbol": symbol, "size": size},
                text=[_label(r) for r in chosen],
                hovertemplate="%{text}<br>p95 delay %{x:.2f}s<br>adjusted+dropped %{y:.3f}%<extra></extra>",
            )
        )
    fig.update_layout(
        title="What-if: events adjusted or dropped vs release delay",
        xaxis_title="p95 release delay (s)",
        yaxis_title="adjusted + dropped (% of events)",
        template="plotly_white",
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def write_outputs(result: SweepResult, out: Path, *, png: bool = True) -> dict[str, str]:
    """Write ``whatif.csv``, ``whatif.json``, ``whatif.html`` (and ``whatif.png``) to ``out``.

    Returns what was written, by kind; ``png_note`` says why a PNG was skipped.
    """
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    result.table.write_csv(out / "whatif.csv")
    written["csv"] = str(out / "whatif.csv")
    doc = {
        "policy": result.policy.describe(),
        "rule": result.rule,
        "recommended": result.recommended,
        "skipped": list(result.skipped),
        "settings": result.table.to_dicts(),
    }
    (out / "whatif.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    written["json"] = str(out / "whatif.json")
    fig = chart(result)
    fig.write_html(out / "whatif.html", include_plotlyjs=True, full_html=True)
    written["html"] = str(out / "whatif.html")
    if png:
        note = write_png(fig, out / "whatif.png")
        written["png" if note is None else "png_note"] = note or str(out / "whatif.png")
    return written


def write_png(fig: Any, path: Path) -> str | None:
    """Write a PNG with kaleido; returns ``None`` on success, else a one-line reason."""
    if not os.environ.get("BROWSER_PATH") and CHROMIUM.exists():
        os.environ["BROWSER_PATH"] = str(CHROMIUM)
    if not os.environ.get("BROWSER_PATH") and not shutil.which("chromium"):
        return "PNG skipped: no Chrome/Chromium for kaleido (install chromium or set BROWSER_PATH)"
    try:
        fig.write_image(path, width=1000, height=600)
    except Exception as exc:  # kaleido raises many kinds when the browser cannot start
        return f"PNG skipped: kaleido could not render ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    return None
