// qf-initiator — a trader on an unmodified QuickFIX FIX 4.4 initiator, for
// the tests that stamp real FIX engines (tests/system/test_quickfix.sh).
//
//   qf-initiator --settings FILE --log-dir DIR --orders N [--rate R]
//                [--timeout SECONDS]
//
// After Logon it sends N BUY NewOrderSingles (35=D, 54=1) at R a second;
// on each BUY's fill (35=8, 39=2) it sends a SELL of the same symbol, as
// the FTTC workload does. When every order has its two ExecutionReports
// (39=0, then 39=2) it logs out and waits for the acceptor's Logout. It
// prints one summary line on standard output and exits 0 only if 2N orders
// went out, 4N reports came back, no reject (35=3, 35=j) went either way,
// and the Logout was clean; 1 otherwise, 2 on a usage or settings error.
// Session settings (host, port, CompIDs, SocketNodelay, DataDictionary)
// are the file's; FileStore and FileLog write into DIR.
#include "qf.h"

#include <quickfix/FileLog.h>
#include <quickfix/FileStore.h>
#include <quickfix/SocketInitiator.h>
#include <quickfix/fix44/NewOrderSingle.h>

#include <thread>

namespace {

const char *const symbols[] = { "TLA", "TLB", "TLC", "TLD" };

class Trader : public qf::Engine {
public:
	using qf::Engine::Engine;

	void order(unsigned long n, char side, const std::string &symbol)
	{
		FIX44::NewOrderSingle o(FIX::ClOrdID((side == FIX::Side_BUY ?
						       "B" : "S") + std::to_string(n)),
					FIX::Side(side), FIX::TransactTime(6),
					FIX::OrdType(FIX::OrdType_LIMIT));

		o.set(FIX::HandlInst('1'));
		o.set(FIX::Symbol(symbol));
		o.set(FIX::OrderQty(100));
		o.set(FIX::Price(100 + (double)(n % 1000) / 1000));
		if (FIX::Session::sendToTarget(o, id))
			sent++;
	}

	FIX::SessionID id;
	std::atomic<unsigned long> sent{0}, news{0}, fills{0}, other{0};

private:
	void app(const FIX::Message &m, const FIX::SessionID &) override
	{
		std::string st;

		if (qf::msg_type(m) != "8") {
			other++;
			return;
		}
		st = m.getField(FIX::FIELD::OrdStatus);
		if (st == "0") {
			news++;
		} else if (st == "2") {
			// The FTTC algorithm: a BUY filled is sold at once.
			std::string cl = m.getField(FIX::FIELD::ClOrdID);

			if (m.getField(FIX::FIELD::Side)[0] == FIX::Side_BUY)
				order(std::stoul(cl.substr(1)), FIX::Side_SELL,
				      m.getField(FIX::FIELD::Symbol));
			fills++;
		} else {
			other++;
		}
	}
};

}  // namespace

int main(int argc, char **argv)
{
	qf::Options o = qf::parse(argc, argv);
	Trader app(o.timeout);
	const unsigned long want = 2 * o.orders;
	bool lost = false, done = false;

	try {
		FIX::SessionSettings settings(o.settings);
		FIX::FileStoreFactory store(o.dir + "/store");
		FIX::FileLogFactory log(o.dir);
		FIX::SocketInitiator initiator(app, store, settings, log);

		app.id = qf::session_id(settings);
		initiator.start();
		if (!app.wait([&] { return app.logged_on.load(); })) {
			std::fprintf(stderr, "qf-initiator: no Logon within %g s\n",
				     o.timeout);
		} else {
			// BUYs at the rate asked; SELLs go out from QuickFIX's
			// thread as the fills come in.
			auto t0 = std::chrono::steady_clock::now();
			auto gap = std::chrono::duration<double>(1 / o.rate);

			for (unsigned long n = 0; n < o.orders && !app.logged_out; n++) {
				std::this_thread::sleep_until(t0 + std::chrono::duration_cast<
					std::chrono::steady_clock::duration>(gap * (double)n));
				app.order(n, FIX::Side_BUY, symbols[n % 4]);
			}
			done = app.wait([&] {
				return (app.news >= want && app.fills >= want) ||
				       app.logged_out;
			});
			lost = app.logged_out;
			if (lost)
				std::fprintf(stderr, "qf-initiator: the session ended "
					     "before every order was filled\n");
			else if (!done)
				std::fprintf(stderr, "qf-initiator: not every order "
					     "was filled within %g s\n", o.timeout);
			FIX::Session *s = FIX::Session::lookupSession(app.id);
			if (s && !lost)
				s->logout("done");
			if (!app.wait([&] { return app.logged_out.load(); }))
				std::fprintf(stderr, "qf-initiator: no Logout within %g s\n",
					     o.timeout);
		}
		initiator.stop();
	} catch (const FIX::ConfigError &e) {
		std::fprintf(stderr, "qf-initiator: %s\n", e.what());
		return 2;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "qf-initiator: %s\n", e.what());
		return 1;
	}
	bool clean = app.clean() && !lost;
	bool ok = app.sent == want && app.news == want && app.fills == want &&
		  !app.other && !app.rejects_in && !app.rejects_out && clean;
	std::printf("qf-initiator: orders_sent=%lu exec_reports=%lu new=%lu "
		    "filled=%lu other=%lu rejects_in=%lu rejects_out=%lu "
		    "logout_clean=%s result=%s\n", app.sent.load(),
		    app.news + app.fills + app.other, app.news.load(),
		    app.fills.load(), app.other.load(), app.rejects_in.load(),
		    app.rejects_out.load(), clean ? "yes" : "no", ok ? "ok" : "FAIL");
	return ok ? 0 : 1;
}
