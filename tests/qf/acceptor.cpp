// qf-acceptor — a venue on an unmodified QuickFIX FIX 4.4 acceptor, for the
// tests that stamp real FIX engines (tests/system/test_quickfix.sh).
//
//   qf-acceptor --settings FILE --log-dir DIR --orders N [--timeout SECONDS]
//
// Answers every NewOrderSingle (35=D) at once with two ExecutionReports:
// New (150=0, 39=0), then Filled (150=F, 39=2). It runs until the
// initiator logs out (or --timeout passes), prints one summary line on
// standard output, and exits 0 only if 2N orders came (N BUYs, N SELLs:
// qf-initiator's --orders N), 4N reports went out, no reject (35=3, 35=j)
// went either way, and the initiator's Logout was answered; 1 otherwise, 2
// on a usage or settings error. "qf-acceptor: listening" on standard error
// says the port is open. Settings come from the file (SocketAcceptPort,
// CompIDs, SocketNodelay, DataDictionary); FileStore and FileLog write into
// DIR.
#include "qf.h"

#include <quickfix/FileLog.h>
#include <quickfix/FileStore.h>
#include <quickfix/SocketAcceptor.h>
#include <quickfix/fix44/ExecutionReport.h>

namespace {

class Venue : public qf::Engine {
public:
	using qf::Engine::Engine;

	std::atomic<unsigned long> orders{0}, reports{0}, other{0};

private:
	void app(const FIX::Message &m, const FIX::SessionID &id) override
	{
		if (qf::msg_type(m) != "D") {
			other++;
			throw FIX::UnsupportedMessageType();
		}
		orders++;
		fill(m, id);
	}

	// An instant match: acknowledged, then filled in full at the limit.
	void fill(const FIX::Message &o, const FIX::SessionID &id)
	{
		std::string cl = o.getField(FIX::FIELD::ClOrdID);
		FIX::OrderQty qty;
		FIX::Price px;

		o.getField(qty);
		o.getField(px);
		for (int i = 0; i < 2; i++) {
			bool filled = i == 1;
			FIX44::ExecutionReport r(
				FIX::OrderID("O" + cl), FIX::ExecID("E" + cl +
								    (filled ? "F" : "N")),
				FIX::ExecType(filled ? FIX::ExecType_TRADE :
						       FIX::ExecType_NEW),
				FIX::OrdStatus(filled ? FIX::OrdStatus_FILLED :
						        FIX::OrdStatus_NEW),
				FIX::Side(o.getField(FIX::FIELD::Side)[0]),
				FIX::LeavesQty(filled ? 0 : qty.getValue()),
				FIX::CumQty(filled ? qty.getValue() : 0),
				FIX::AvgPx(filled ? px.getValue() : 0));

			r.set(FIX::ClOrdID(cl));
			r.set(FIX::Symbol(o.getField(FIX::FIELD::Symbol)));
			r.set(qty);
			r.set(px);
			if (filled) {
				r.set(FIX::LastQty(qty.getValue()));
				r.set(FIX::LastPx(px.getValue()));
			}
			r.set(FIX::TransactTime(6));
			if (FIX::Session::sendToTarget(r, id))
				reports++;
		}
	}

};

}  // namespace

int main(int argc, char **argv)
{
	qf::Options o = qf::parse(argc, argv);
	Venue app(o.timeout);
	const unsigned long want = 2 * o.orders;

	try {
		FIX::SessionSettings settings(o.settings);
		FIX::FileStoreFactory store(o.dir + "/store");
		FIX::FileLogFactory log(o.dir);
		FIX::SocketAcceptor acceptor(app, store, settings, log);

		qf::session_id(settings);
		acceptor.start();
		std::fprintf(stderr, "qf-acceptor: listening\n");
		if (!app.wait([&] { return app.logged_out.load(); }))
			std::fprintf(stderr, "qf-acceptor: no Logout within %g s\n",
				     o.timeout);
		acceptor.stop();
	} catch (const FIX::ConfigError &e) {
		std::fprintf(stderr, "qf-acceptor: %s\n", e.what());
		return 2;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "qf-acceptor: %s\n", e.what());
		return 1;
	}
	bool ok = app.orders == want && app.reports == 2 * want && !app.other &&
		  !app.rejects_in && !app.rejects_out && app.clean();
	std::printf("qf-acceptor: orders_received=%lu exec_reports_sent=%lu "
		    "other=%lu rejects_in=%lu rejects_out=%lu logout_clean=%s "
		    "result=%s\n", app.orders.load(), app.reports.load(),
		    app.other.load(), app.rejects_in.load(),
		    app.rejects_out.load(), app.clean() ? "yes" : "no",
		    ok ? "ok" : "FAIL");
	return ok ? 0 : 1;
}
