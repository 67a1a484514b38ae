"""The FastAPI app of ``caledonia serve`` (endpoints in docs/web.md).

Every endpoint answers JSON; bad input is a 400 (404 for an unknown game id) with
``{"detail": "<message>"}``, never a traceback. Bot moves run in FastAPI's thread pool
(plain ``def`` endpoints) under the game's lock. Uploaded records are parsed as data
(``Game.from_json``); nothing from a request is executed.

Security (docs/web.md): bots come only from the server's :class:`AgentMenu` (bounded
parameters, checkpoints by name), records may not name a ruleset file, bodies and JSON
nesting are bounded (:class:`BodyGuard`) and only the allowed Host names are answered
(``TrustedHostMiddleware``, against DNS rebinding).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.middleware.trustedhost import TrustedHostMiddleware

from caledonia_env.config import CLAN_NAMES
from caledonia_env.engine.compile.first_run import ESTIMATE_S, engine_cached
from caledonia_env.game import IllegalActionError
from caledonia_env.map import MODULE_SIDES
from caledonia_env.web.guards import BodyGuard, allowed_hosts
from caledonia_env.web.seats import AgentMenu
from caledonia_env.web.sessions import Store, new_session, replay_session
from caledonia_env.web.view import board_json, position_json

STATIC = Path(__file__).parent / "static"
#: Largest record accepted by /api/replays (characters).
MAX_RECORD_CHARS = 2_000_000
#: Largest request body (bytes): a record of MAX_RECORD_CHARS with every character escaped.
MAX_BODY_BYTES = 2 * MAX_RECORD_CHARS + 65_536


class NewGame(BaseModel):
    players: list[str] = Field(min_length=1, max_length=4,
                               description="agent names (greedy, random, mcts:16, …) or 'human'")
    clans: Optional[Union[str, list[Optional[str]]]] = "draft"
    map: Optional[str] = None
    seed: int = Field(0, ge=0)


class Replay(BaseModel):
    record: str = Field(max_length=MAX_RECORD_CHARS)
    name: str = Field("", max_length=200)


class Step(BaseModel):
    delta: int = Field(1, ge=-10_000, le=10_000)


class Goto(BaseModel):
    position: Optional[int] = None
    round: Optional[int] = Field(None, ge=1, le=6)


class Act(BaseModel):
    action: int


def create_app(limit: int = 32, *, menu: AgentMenu | None = None, host: str | None = None,
               allowed: Optional[list] = None, rulesets=()) -> FastAPI:
    """The app; ``limit`` games are kept in memory (least recently used evicted).

    ``menu``: the bots offered (default :class:`AgentMenu`: the named agents and the shipped
    checkpoints, default bounds); ``host``: the address the server binds, answered as a
    Host name besides localhost / 127.0.0.1 / ::1, plus the names in ``allowed``;
    ``rulesets``: ruleset paths (as records write them) an uploaded record may name."""
    app = FastAPI(title="caledonia serve", docs_url="/api/docs", redoc_url=None)
    store = Store(limit)
    menu = menu or AgentMenu()
    rulesets = frozenset(rulesets)
    app.state.store, app.state.menu = store, menu
    app.add_middleware(BodyGuard, max_bytes=MAX_BODY_BYTES)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts(host, allowed or ()),
                       www_redirect=False)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError):
        parts = []
        for err in exc.errors():
            where = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
            parts.append(f"{where}: {err.get('msg', 'invalid')}")
        return JSONResponse({"detail": "bad request: " + "; ".join(parts)}, status_code=400)

    def session(gid):
        try:
            return store.get(gid)
        except KeyError:
            raise HTTPException(404, f"no game {gid!r} (it may have been evicted: the server "
                                     f"keeps the {store.limit} most recently used games)") from None

    def run(gid, fn):
        s = session(gid)
        with s.lock:
            s.begin_request()
            try:
                fn(s)
            except IllegalActionError as e:
                raise HTTPException(400, f"illegal action: {e}") from None
            except ValueError as e:
                raise HTTPException(400, str(e)) from None
            return position_json(s)

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html")

    @app.get("/api/meta")
    def meta():
        return {**menu.describe(), "clans": list(CLAN_NAMES), "sides": list(MODULE_SIDES),
                "games": store.ids(), "limit": store.limit,
                "engine": {"compiled": engine_cached(), "estimate_s": ESTIMATE_S}}

    @app.post("/api/games")
    def new_game(req: NewGame):
        clans = req.clans
        try:
            s = new_session(store.new_id(), list(req.players), clans=clans, map=req.map,
                            seed=req.seed, menu=menu)
        except ValueError as e:
            raise HTTPException(400, str(e)) from None
        store.add(s)
        return position_json(s)

    @app.post("/api/replays")
    def new_replay(req: Replay):
        try:
            s = replay_session(store.new_id(), req.record, label=req.name, rulesets=rulesets)
        except ValueError as e:
            raise HTTPException(400, str(e)) from None
        store.add(s)
        return position_json(s)

    @app.get("/api/games/{gid}")
    def get_game(gid: str):
        return run(gid, lambda s: None)

    @app.get("/api/games/{gid}/board")
    def get_board(gid: str):
        return board_json(session(gid).start)

    @app.post("/api/games/{gid}/step")
    def step(gid: str, req: Step):
        return run(gid, lambda s: s.step(req.delta))

    @app.post("/api/games/{gid}/goto")
    def goto(gid: str, req: Goto):
        if (req.position is None) == (req.round is None):
            raise HTTPException(400, "give exactly one of 'position' or 'round'")
        return run(gid, lambda s: s.goto(req.position, req.round))

    @app.post("/api/games/{gid}/act")
    def act(gid: str, req: Act):
        return run(gid, lambda s: s.act(req.action))

    @app.post("/api/games/{gid}/undo")
    def undo(gid: str):
        return run(gid, lambda s: s.undo())

    @app.get("/api/games/{gid}/record", response_class=PlainTextResponse)
    def record(gid: str):
        s = session(gid)
        with s.lock:
            return PlainTextResponse(s.to_json(), media_type="application/json", headers={
                "Content-Disposition": f'attachment; filename="caledonia_{gid}.json"'})

    @app.delete("/api/games/{gid}")
    def delete(gid: str):
        session(gid)
        store.remove(gid)
        return {"deleted": gid}

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
