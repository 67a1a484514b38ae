"""The FastAPI app of ``caledonia serve`` (endpoints in docs/web.md).

Every endpoint answers JSON; bad input is a 400 (404 for an unknown game id) with
``{"detail": "<message>"}``, never a traceback. Request fields are strict JSON types
(``"seed": true``, ``"1"`` or ``1.0`` for an int are refused, as ``Game.step`` does). Bot
moves run in FastAPI's thread pool (plain ``def`` endpoints) under the game's lock, at most
:class:`~caledonia_env.web.capacity.BotSlots` requests at once, each client its share (a
``429`` with ``Retry-After`` past it); the search kernels release the GIL, so the event
loop (``async`` endpoints such as /api/meta) answers meanwhile. Uploaded records are parsed as data
(``Game.from_json``); nothing from a request is executed.

Security (docs/web.md): bots come only from the server's :class:`AgentMenu` (bounded
parameters, checkpoints by name), records may not name a ruleset file, bodies and JSON
nesting are bounded (:class:`BodyGuard`) and only the allowed Host names are answered
(``TrustedHostMiddleware``, against DNS rebinding).
"""
from __future__ import annotations

import json
import urllib.parse
from pathlib import Path
from typing import Optional, Union

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import (FileResponse, HTMLResponse, JSONResponse, PlainTextResponse,
                               RedirectResponse)
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.middleware.trustedhost import TrustedHostMiddleware

from caledonia_env.config import CLAN_NAMES
from caledonia_env.engine.compile.first_run import ESTIMATE_S, engine_cached
from caledonia_env.game import IllegalActionError
from caledonia_env.map import MODULE_SIDES
from caledonia_env.web.capacity import BotSlots, Busy
from caledonia_env.web.guards import BodyGuard, ShutdownGuard, allowed_hosts, shown
from caledonia_env.web.reports import (CSP, REPORTS_DIR, SERVED, list_reports, listing_html,
                                       report_file)
from caledonia_env.web.seats import AgentMenu
from caledonia_env.web.sessions import Store, new_session, replay_session
from caledonia_env.web.view import board_json, position_json

STATIC = Path(__file__).parent / "static"
#: Largest record accepted by /api/replays (characters).
MAX_RECORD_CHARS = 2_000_000
#: Largest request body (bytes): a record of MAX_RECORD_CHARS with every character escaped.
MAX_BODY_BYTES = 2 * MAX_RECORD_CHARS + 65_536
#: Seconds a request waits for its game while another request of that game runs (then 429).
GAME_WAIT_SECONDS = 1.0
#: Characters of a game id an error message quotes.
ID_SHOWN = 40


class Strict(BaseModel):
    """Request bodies take JSON's own types: no bool, string or float for an int."""
    model_config = ConfigDict(strict=True)


class NewGame(Strict):
    players: list[str] = Field(min_length=1, max_length=4,
                               description="agent names (greedy, random, mcts:16, …) or 'human'")
    clans: Optional[Union[str, list[Optional[str]]]] = "draft"
    map: Optional[str] = None
    seed: int = Field(0, ge=0)


class Replay(Strict):
    record: str = Field(max_length=MAX_RECORD_CHARS)
    name: str = Field("", max_length=200)


class Step(Strict):
    delta: int = Field(1, ge=-10_000, le=10_000)


class Goto(Strict):
    position: Optional[int] = None
    round: Optional[int] = Field(None, ge=1, le=6)


class Act(Strict):
    action: int


def create_app(limit: int = 32, *, menu: AgentMenu | None = None, host: str | None = None,
               allowed: Optional[list] = None, rulesets=(), bot_slots: int | None = None,
               body_seconds: float | None = None, reports=REPORTS_DIR) -> FastAPI:
    """The app; ``limit`` games are kept in memory (:class:`Store`: each client keeps its
    share, the least recently used go first).

    ``menu``: the bots offered (default :class:`AgentMenu`: the named agents and the shipped
    checkpoints, default bounds); ``host``: the address the server binds, answered as a
    Host name besides localhost / 127.0.0.1 / ::1, plus the names in ``allowed``;
    ``rulesets``: ruleset paths (as records write them) an uploaded record may name;
    ``bot_slots``: requests playing bot moves at once (default: the usable cores; each
    client its share, :class:`BotSlots`);
    ``body_seconds``: a request body must arrive within this time (default: BodyGuard's);
    ``reports``: the folder of study reports /reports lists (:mod:`caledonia_env.web.reports`).
    ``app.state.slots.stopping`` set: bot play ends at the next decision (shutdown)."""
    app = FastAPI(title="caledonia serve", docs_url="/api/docs", redoc_url=None)
    store = Store(limit)
    menu = menu or AgentMenu()
    slots = BotSlots(bot_slots, budget=menu.limits.step_seconds)
    rulesets = frozenset(rulesets)
    app.state.store, app.state.menu, app.state.slots = store, menu, slots
    app.state.reports = reports = Path(reports)
    guard = {} if body_seconds is None else {"body_seconds": body_seconds}
    app.add_middleware(BodyGuard, max_bytes=MAX_BODY_BYTES, **guard)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts(host, allowed or ()),
                       www_redirect=False)
    app.add_middleware(ShutdownGuard)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError):
        parts = []
        for err in exc.errors():
            where = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
            msg = err.get("msg", "invalid")
            if where != "body" and "input" in err and err.get("type") != "missing":
                msg += f", got {_json_shown(err['input'])}"
            parts.append(f"{where}: {msg}")
        return JSONResponse({"detail": "bad request: " + "; ".join(parts)}, status_code=400)

    @app.exception_handler(Busy)
    async def busy(request: Request, exc: Busy):
        return JSONResponse({"detail": str(exc), "retry_after": exc.retry_after},
                            status_code=exc.status,
                            headers={"Retry-After": str(exc.retry_after)})

    def session(gid):
        try:
            return store.get(gid)
        except KeyError:
            raise HTTPException(404, f"no game {shown(gid, ID_SHOWN + 1)} (it may have been "
                                     f"evicted: the server keeps {store.limit} games, the "
                                     f"least recently used go first)") from None

    def hold(s):
        """Take the game's lock, waiting GAME_WAIT_SECONDS at most (then a 429)."""
        if not s.lock.acquire(timeout=GAME_WAIT_SECONDS):
            raise Busy(f"busy: game {shown(s.id, ID_SHOWN + 1)} is answering another "
                       f"request (its bots are playing); retry when that one is answered",
                       max(1, round(s.step_seconds)))

    def run(gid, fn, request):
        s = session(gid)
        hold(s)
        try:
            with slots.work(client_of(request)) as work:
                s.begin_request(work)
                try:
                    fn(s)
                except IllegalActionError as e:
                    raise HTTPException(400, f"illegal action: {e}") from None
                except ValueError as e:
                    raise HTTPException(400, str(e)) from None
                finally:
                    s.end_request()
                return position_json(s)
        finally:
            s.lock.release()

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html")

    @app.get("/api/meta")
    async def meta():                 # on the event loop: answers while bots play
        return {**menu.describe(), "clans": list(CLAN_NAMES), "sides": list(MODULE_SIDES),
                "games": store.ids(), "limit": store.limit,
                "bot_slots": {"size": slots.size, "playing": slots.in_use()},
                "engine": {"compiled": engine_cached(), "estimate_s": ESTIMATE_S}}

    @app.post("/api/games")
    def new_game(req: NewGame, request: Request):
        clans = req.clans
        with slots.work(client_of(request)) as work:
            try:
                s = new_session(store.new_id(), list(req.players), clans=clans, map=req.map,
                                seed=req.seed, menu=menu, work=work)
            except ValueError as e:
                raise HTTPException(400, str(e)) from None
            s.end_request()
        store.add(s, client_of(request))
        return position_json(s)

    @app.post("/api/replays")
    def new_replay(req: Replay, request: Request):
        try:
            s = replay_session(store.new_id(), req.record, label=req.name, rulesets=rulesets)
        except ValueError as e:
            raise HTTPException(400, str(e)) from None
        store.add(s, client_of(request))
        return position_json(s)

    @app.get("/api/games/{gid}")
    def get_game(gid: str, request: Request):
        return run(gid, lambda s: None, request)

    @app.get("/api/games/{gid}/board")
    def get_board(gid: str):
        return board_json(session(gid).start)

    @app.post("/api/games/{gid}/step")
    def step(gid: str, req: Step, request: Request):
        return run(gid, lambda s: s.step(req.delta), request)

    @app.post("/api/games/{gid}/goto")
    def goto(gid: str, req: Goto, request: Request):
        if (req.position is None) == (req.round is None):
            raise HTTPException(400, "give exactly one of 'position' or 'round'")
        return run(gid, lambda s: s.goto(req.position, req.round), request)

    @app.post("/api/games/{gid}/act")
    def act(gid: str, req: Act, request: Request):
        return run(gid, lambda s: s.act(req.action), request)

    @app.post("/api/games/{gid}/undo")
    def undo(gid: str, request: Request):
        return run(gid, lambda s: s.undo(), request)

    @app.get("/api/games/{gid}/record", response_class=PlainTextResponse)
    def record(gid: str):
        s = session(gid)
        hold(s)
        try:
            return PlainTextResponse(s.to_json(), media_type="application/json", headers={
                "Content-Disposition": f'attachment; filename="caledonia_{gid}.json"'})
        finally:
            s.lock.release()

    @app.delete("/api/games/{gid}")
    def delete(gid: str):
        session(gid)
        store.remove(gid)
        return {"deleted": gid}

    page_headers = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"}

    def report_response(name: str, file: str):
        try:
            path = report_file(reports, name, file)
        except LookupError:
            raise HTTPException(404, f"no report {shown(name, ID_SHOWN + 1)} (GET /api/reports "
                                     f"lists them)") from None
        return FileResponse(path, media_type=SERVED[file], headers=page_headers)

    @app.get("/api/reports")
    def reports_list():
        return {"reports": list_reports(reports)}

    @app.get("/reports", include_in_schema=False)
    def reports_page():
        return HTMLResponse(listing_html(list_reports(reports)), headers=page_headers)

    @app.get("/reports/{name}", include_in_schema=False)
    def report_slash(name: str):
        return RedirectResponse(f"/reports/{urllib.parse.quote(name, safe='')}/")

    @app.get("/reports/{name}/", include_in_schema=False)
    def report_page(name: str):
        return report_response(name, "index.html")

    @app.get("/reports/{name}/{file}", include_in_schema=False)
    def report_download(name: str, file: str):
        return report_response(name, file)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def client_of(request: Request) -> str:
    """Who a request comes from, for the per-client shares of the games and of the bot
    slots: the connection's remote address (``caledonia serve`` does not trust X-Forwarded-For)."""
    return request.client.host if request.client else ""


def _json_shown(value) -> str:
    """A request value as JSON, cut to about 40 characters."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= ID_SHOWN else text[:ID_SHOWN] + "…"

